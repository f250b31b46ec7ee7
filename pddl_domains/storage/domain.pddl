; Storage, written for pddlworlds after the model of the IPC 2006 propositional domain (storage):
; the same types, predicates, actions and parameters, so the competition's problem files load unchanged.
; The original declares the type area twice, once under object and once under surface; Fast Downward's reading
; gives area both parents, and since surface is itself an object that is the single declaration below.
; Hoists move crates from the containers' areas, across the loading area, into the depots' store areas.
(define (domain Storage-Propositional)
  (:requirements :typing :strips)
  (:types hoist surface place - object
          container depot - place
          area crate - surface
          storearea transitarea - area)
  (:predicates
    (clear ?s - storearea)
    (in ?x - (either storearea crate) ?p - place)
    (available ?h - hoist)
    (lifting ?h - hoist ?c - crate)
    (at ?h - hoist ?a - area)
    (on ?c - crate ?s - storearea)
    (connected ?a1 ?a2 - area)
    (compatible ?c1 ?c2 - crate))

  ; A free hoist lifts a crate from a store area next to the area it stands in.
  (:action lift
    :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (available ?h) (on ?c ?a1) (in ?a1 ?p))
    :effect (and (not (on ?c ?a1)) (clear ?a1) (not (available ?h)) (lifting ?h ?c) (not (in ?c ?p))))

  ; It drops the crate on a clear store area next to it; the crate is then in that area's place.
  (:action drop
    :parameters (?h - hoist ?c - crate ?a1 - storearea ?a2 - area ?p - place)
    :precondition (and (connected ?a1 ?a2) (at ?h ?a2) (lifting ?h ?c) (clear ?a1) (in ?a1 ?p))
    :effect (and (not (lifting ?h ?c)) (available ?h) (not (clear ?a1)) (on ?c ?a1) (in ?c ?p)))

  ; Hoists occupy the store area they stand in.
  (:action move
    :parameters (?h - hoist ?from ?to - storearea)
    :precondition (and (at ?h ?from) (clear ?to) (connected ?from ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (not (clear ?to)) (clear ?from)))

  (:action go-out
    :parameters (?h - hoist ?from - storearea ?to - transitarea)
    :precondition (and (at ?h ?from) (connected ?from ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (clear ?from)))

  (:action go-in
    :parameters (?h - hoist ?from - transitarea ?to - storearea)
    :precondition (and (at ?h ?from) (connected ?from ?to) (clear ?to))
    :effect (and (not (at ?h ?from)) (at ?h ?to) (not (clear ?to)))))
