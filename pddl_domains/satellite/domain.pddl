; Satellite, written for pddlworlds after the model of the IPC 2002 STRIPS domain (satellite, also run at
; IPC 2004): same predicates, actions and parameter order, so the competitions' problem files load
; unchanged and their plans replay here.
; Untyped: the one-place predicates satellite, instrument, mode and direction are the kinds.
; A satellite turns between directions; an instrument on board, once switched on (which takes the
; satellite's power and undoes any calibration) and calibrated on its own target, takes images in the
; modes it supports of the direction its satellite points at.
(define (domain satellite)
  (:requirements :strips)
  (:predicates
    (on_board ?i ?s) (supports ?i ?m) (pointing ?s ?d) (power_avail ?s) (power_on ?i) (calibrated ?i)
    (have_image ?d ?m) (calibration_target ?i ?d)
    (satellite ?x) (direction ?x) (instrument ?x) (mode ?x))

  (:action turn_to
    :parameters (?s ?d_new ?d_prev)
    :precondition (and (satellite ?s) (direction ?d_new) (direction ?d_prev) (pointing ?s ?d_prev))
    :effect (and (pointing ?s ?d_new) (not (pointing ?s ?d_prev))))

  (:action switch_on
    :parameters (?i ?s)
    :precondition (and (instrument ?i) (satellite ?s) (on_board ?i ?s) (power_avail ?s))
    :effect (and (power_on ?i) (not (calibrated ?i)) (not (power_avail ?s))))

  (:action switch_off
    :parameters (?i ?s)
    :precondition (and (instrument ?i) (satellite ?s) (on_board ?i ?s) (power_on ?i))
    :effect (and (power_avail ?s) (not (power_on ?i))))

  (:action calibrate
    :parameters (?s ?i ?d)
    :precondition (and (satellite ?s) (instrument ?i) (direction ?d) (on_board ?i ?s)
                       (calibration_target ?i ?d) (pointing ?s ?d) (power_on ?i))
    :effect (calibrated ?i))

  (:action take_image
    :parameters (?s ?d ?i ?m)
    :precondition (and (satellite ?s) (direction ?d) (instrument ?i) (mode ?m) (calibrated ?i)
                       (on_board ?i ?s) (supports ?i ?m) (power_on ?i) (pointing ?s ?d))
    :effect (have_image ?d ?m)))
