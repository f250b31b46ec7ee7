; Miconic, written for pddlworlds after the model of the AIPS-2000 STRIPS elevator domain (miconic):
; the same predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; Untyped: the kinds are one-place predicates (passenger, floor). (above ?floor1 ?floor2) says ?floor2
; is higher up than ?floor1; origin and destin never change.
(define (domain miconic)
  (:requirements :strips)
  (:predicates
    (origin ?person ?floor) (floor ?floor) (passenger ?passenger) (destin ?person ?floor)
    (above ?floor1 ?floor2) (boarded ?person) (served ?person) (lift-at ?floor))

  ; The lift stops where a passenger starts and lets them in.
  (:action board
    :parameters (?f ?p)
    :precondition (and (floor ?f) (passenger ?p) (lift-at ?f) (origin ?p ?f))
    :effect (boarded ?p))

  ; A passenger on board leaves at their destination, and is served.
  (:action depart
    :parameters (?f ?p)
    :precondition (and (floor ?f) (passenger ?p) (lift-at ?f) (destin ?p ?f) (boarded ?p))
    :effect (and (not (boarded ?p)) (served ?p)))

  ; The lift goes straight up or down to any other floor.
  (:action up
    :parameters (?f1 ?f2)
    :precondition (and (floor ?f1) (floor ?f2) (lift-at ?f1) (above ?f1 ?f2))
    :effect (and (lift-at ?f2) (not (lift-at ?f1))))

  (:action down
    :parameters (?f1 ?f2)
    :precondition (and (floor ?f1) (floor ?f2) (lift-at ?f1) (above ?f2 ?f1))
    :effect (and (lift-at ?f2) (not (lift-at ?f1)))))
