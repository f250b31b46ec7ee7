; Depot, written for pddlworlds after the model of the IPC 2002 STRIPS domain (depot):
; the same predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; Untyped: the kinds are one-place predicates (place: depot or distributor; surface: pallet or crate;
; truck, hoist). Trucks carry crates between places; a hoist at each place stacks them, blocks-world style.
(define (domain depot)
  (:requirements :strips)
  (:predicates
    (at ?obj ?place) (on ?crate ?surface) (in ?crate ?truck) (lifting ?hoist ?crate)
    (available ?hoist) (clear ?surface)
    (place ?x) (locatable ?x) (depot ?x) (distributor ?x) (truck ?x) (hoist ?x) (surface ?x)
    (pallet ?x) (crate ?x))

  ; A truck goes from any place to any other.
  (:action drive
    :parameters (?truck ?from ?to)
    :precondition (and (truck ?truck) (place ?from) (place ?to) (at ?truck ?from))
    :effect (and (at ?truck ?to) (not (at ?truck ?from))))

  ; A free hoist takes the top crate off a pallet or crate at its place.
  (:action lift
    :parameters (?hoist ?crate ?surface ?place)
    :precondition (and (hoist ?hoist) (crate ?crate) (surface ?surface) (place ?place)
                       (at ?hoist ?place) (available ?hoist) (at ?crate ?place) (on ?crate ?surface)
                       (clear ?crate))
    :effect (and (lifting ?hoist ?crate) (clear ?surface) (not (at ?crate ?place)) (not (clear ?crate))
                 (not (available ?hoist)) (not (on ?crate ?surface))))

  ; It puts the crate it holds on a clear pallet or crate at its place.
  (:action drop
    :parameters (?hoist ?crate ?surface ?place)
    :precondition (and (hoist ?hoist) (crate ?crate) (surface ?surface) (place ?place)
                       (at ?hoist ?place) (at ?surface ?place) (clear ?surface) (lifting ?hoist ?crate))
    :effect (and (available ?hoist) (at ?crate ?place) (clear ?crate) (on ?crate ?surface)
                 (not (lifting ?hoist ?crate)) (not (clear ?surface))))

  ; Or into a truck at its place, and back out of it.
  (:action load
    :parameters (?hoist ?crate ?truck ?place)
    :precondition (and (hoist ?hoist) (crate ?crate) (truck ?truck) (place ?place)
                       (at ?hoist ?place) (at ?truck ?place) (lifting ?hoist ?crate))
    :effect (and (in ?crate ?truck) (available ?hoist) (not (lifting ?hoist ?crate))))

  (:action unload
    :parameters (?hoist ?crate ?truck ?place)
    :precondition (and (hoist ?hoist) (crate ?crate) (truck ?truck) (place ?place)
                       (at ?hoist ?place) (at ?truck ?place) (available ?hoist) (in ?crate ?truck))
    :effect (and (lifting ?hoist ?crate) (not (in ?crate ?truck)) (not (available ?hoist)))))
