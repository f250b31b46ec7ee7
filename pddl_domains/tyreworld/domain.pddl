; Tyreworld: replace flat tyres using tools fetched from the boot (after Hoffmann's STRIPS model).
; The tools wrench, jack and pump are constants of the domain; the public problems also declare them as
; objects, which the loader normalises (see pddlworlds.pddl). (in ?obj ?container) takes the object first,
; as every public problem writes (in jack boot).
(define (domain tyreworld)
  (:requirements :strips :typing)
  (:types
    obj hub container - object
    tool wheel nut - obj)
  (:constants wrench jack pump - tool)
  (:predicates
    (in ?obj - obj ?container - container)
    (have ?obj - obj)
    (isopen ?container - container)
    (closed ?container - container)
    (unlocked ?container - container)
    (intact ?wheel - wheel)
    (inflated ?wheel - wheel)
    (not-inflated ?wheel - wheel)
    (on ?wheel - wheel ?hub - hub)
    (on-ground ?hub - hub)
    (not-on-ground ?hub - hub)
    (tight ?nut - nut ?hub - hub)
    (loose ?nut - nut ?hub - hub)
    (fastened ?hub - hub)
    (unfastened ?hub - hub)
    (free ?hub - hub))

  (:action open
    :parameters (?container - container)
    :precondition (and (unlocked ?container) (closed ?container))
    :effect (and (isopen ?container) (not (closed ?container))))

  (:action close
    :parameters (?container - container)
    :precondition (isopen ?container)
    :effect (and (closed ?container) (not (isopen ?container))))

  (:action fetch
    :parameters (?obj - obj ?container - container)
    :precondition (and (in ?obj ?container) (isopen ?container))
    :effect (and (have ?obj) (not (in ?obj ?container))))

  (:action put-away
    :parameters (?obj - obj ?container - container)
    :precondition (and (have ?obj) (isopen ?container))
    :effect (and (in ?obj ?container) (not (have ?obj))))

  (:action loosen
    :parameters (?nut - nut ?hub - hub)
    :precondition (and (have wrench) (tight ?nut ?hub) (on-ground ?hub))
    :effect (and (loose ?nut ?hub) (not (tight ?nut ?hub))))

  (:action tighten
    :parameters (?nut - nut ?hub - hub)
    :precondition (and (have wrench) (loose ?nut ?hub) (on-ground ?hub))
    :effect (and (tight ?nut ?hub) (not (loose ?nut ?hub))))

  (:action jack-up
    :parameters (?hub - hub)
    :precondition (and (on-ground ?hub) (have jack))
    :effect (and (not-on-ground ?hub) (not (on-ground ?hub)) (not (have jack))))

  (:action jack-down
    :parameters (?hub - hub)
    :precondition (not-on-ground ?hub)
    :effect (and (on-ground ?hub) (have jack) (not (not-on-ground ?hub))))

  (:action undo
    :parameters (?nut - nut ?hub - hub)
    :precondition (and (not-on-ground ?hub) (fastened ?hub) (have wrench) (loose ?nut ?hub))
    :effect (and (have ?nut) (unfastened ?hub)
                 (not (fastened ?hub)) (not (loose ?nut ?hub))))

  (:action do-up
    :parameters (?nut - nut ?hub - hub)
    :precondition (and (have wrench) (unfastened ?hub) (not-on-ground ?hub) (have ?nut))
    :effect (and (loose ?nut ?hub) (fastened ?hub)
                 (not (unfastened ?hub)) (not (have ?nut))))

  (:action remove-wheel
    :parameters (?wheel - wheel ?hub - hub)
    :precondition (and (not-on-ground ?hub) (on ?wheel ?hub) (unfastened ?hub))
    :effect (and (have ?wheel) (free ?hub) (not (on ?wheel ?hub))))

  (:action put-on-wheel
    :parameters (?wheel - wheel ?hub - hub)
    :precondition (and (have ?wheel) (free ?hub) (unfastened ?hub) (not-on-ground ?hub))
    :effect (and (on ?wheel ?hub) (not (have ?wheel)) (not (free ?hub))))

  (:action inflate
    :parameters (?wheel - wheel)
    :precondition (and (have pump) (not-inflated ?wheel) (intact ?wheel))
    :effect (and (inflated ?wheel) (not (not-inflated ?wheel)))))
