; Logistics, written for pddlworlds after the model of the IPC 2000 STRIPS domain (logistics00):
; the same predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; Kinds are one-place predicates (the original is untyped): package, truck, airplane, airport, location, city.
; (The original declares (in ?obj ?obj); the second parameter is named ?container here, which readers that
; refuse a repeated name also take.)
(define (domain logistics)
  (:requirements :strips)
  (:predicates
    (package ?obj) (truck ?truck) (airplane ?airplane) (airport ?airport) (location ?loc)
    (in-city ?obj ?city) (city ?city)
    (at ?obj ?loc)
    (in ?obj ?container))

  ; A package is put into a truck standing where the package is.
  (:action load-truck
    :parameters (?obj ?truck ?loc)
    :precondition (and (package ?obj) (truck ?truck) (location ?loc) (at ?truck ?loc) (at ?obj ?loc))
    :effect (and (not (at ?obj ?loc)) (in ?obj ?truck)))

  (:action load-airplane
    :parameters (?obj ?airplane ?loc)
    :precondition (and (package ?obj) (airplane ?airplane) (location ?loc) (at ?obj ?loc) (at ?airplane ?loc))
    :effect (and (not (at ?obj ?loc)) (in ?obj ?airplane)))

  (:action unload-truck
    :parameters (?obj ?truck ?loc)
    :precondition (and (package ?obj) (truck ?truck) (location ?loc) (at ?truck ?loc) (in ?obj ?truck))
    :effect (and (not (in ?obj ?truck)) (at ?obj ?loc)))

  (:action unload-airplane
    :parameters (?obj ?airplane ?loc)
    :precondition (and (package ?obj) (airplane ?airplane) (location ?loc) (in ?obj ?airplane) (at ?airplane ?loc))
    :effect (and (not (in ?obj ?airplane)) (at ?obj ?loc)))

  ; Trucks stay within their city.
  (:action drive-truck
    :parameters (?truck ?loc-from ?loc-to ?city)
    :precondition (and (truck ?truck) (location ?loc-from) (location ?loc-to) (city ?city)
                       (at ?truck ?loc-from) (in-city ?loc-from ?city) (in-city ?loc-to ?city))
    :effect (and (not (at ?truck ?loc-from)) (at ?truck ?loc-to)))

  ; Airplanes fly between any two airports.
  (:action fly-airplane
    :parameters (?airplane ?loc-from ?loc-to)
    :precondition (and (airplane ?airplane) (airport ?loc-from) (airport ?loc-to) (at ?airplane ?loc-from))
    :effect (and (not (at ?airplane ?loc-from)) (at ?airplane ?loc-to))))
