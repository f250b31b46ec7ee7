; Fridge repair, written for pddlworlds after the model of Joerg Hoffmann's fridge domain (fridge):
; switch a fridge off, loosen the screws that hold its compressor, swap the compressor, screw it back
; and switch the fridge on again.
(define (domain fridge-domain)
  (:requirements :typing :disjunctive-preconditions :negative-preconditions)
  (:types screw backplane compressor fridge)
  (:predicates
    (screwed ?s - screw)
    (attached ?c - compressor ?f - fridge)
    (fits ?s - screw ?c - compressor)
    (fridge-on ?f - fridge))

  (:action fasten
    :parameters (?x - screw)
    :precondition (not (screwed ?x))
    :effect (screwed ?x))

  ; a screw comes loose only where it holds a compressor in a fridge that is off
  (:action unfasten
    :parameters (?x - screw)
    :precondition (and (exists (?f - fridge)
                         (exists (?c - compressor)
                           (and (attached ?c ?f) (fits ?x ?c) (not (fridge-on ?f)))))
                       (screwed ?x))
    :effect (not (screwed ?x)))

  ; a fridge starts once the compressor in it has all of its screws fastened
  (:action start-fridge
    :parameters (?f - fridge)
    :precondition (and (exists (?c - compressor)
                         (and (attached ?c ?f)
                              (forall (?a - screw) (imply (fits ?a ?c) (screwed ?a)))))
                       (not (fridge-on ?f)))
    :effect (fridge-on ?f))

  (:action stop-fridge
    :parameters (?f - fridge)
    :precondition (fridge-on ?f)
    :effect (not (fridge-on ?f)))

  ; out comes a compressor of a fridge that is off, all its screws loose
  (:action remove-compressor
    :parameters (?x - compressor ?f - fridge)
    :precondition (and (not (fridge-on ?f))
                       (attached ?x ?f)
                       (forall (?a - screw) (imply (fits ?a ?x) (not (screwed ?a)))))
    :effect (not (attached ?x ?f)))

  ; in goes a compressor, its screws loose, into a fridge that is off and holds none
  (:action attach-compressor
    :parameters (?x - compressor ?f - fridge)
    :precondition (and (not (fridge-on ?f))
                       (forall (?y - compressor) (not (attached ?y ?f)))
                       (forall (?a - screw) (imply (fits ?a ?x) (not (screwed ?a)))))
    :effect (attached ?x ?f)))
