; Visitall, written for pddlworlds after the model of the IPC 2011 domain (visitall-opt11-strips):
; a robot walks a grid of places and must set foot on each of the places the goal names.
(define (domain grid-visit-all)
  (:requirements :typing :strips)
  (:types place - object)
  (:predicates
    (connected ?x ?y - place)
    (at-robot ?x - place)
    (visited ?x - place))

  ; One step to a neighbouring place, which counts as visited from then on.
  (:action move
    :parameters (?curpos ?nextpos - place)
    :precondition (and (at-robot ?curpos) (connected ?curpos ?nextpos))
    :effect (and (at-robot ?nextpos) (not (at-robot ?curpos)) (visited ?nextpos))))
