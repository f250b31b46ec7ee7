; Zenotravel, written for pddlworlds after the model of the IPC 2002 STRIPS domain (zenotravel):
; the same predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; Untyped: the kinds are one-place predicates (aircraft, person, city, flevel). Fuel comes in levels
; ordered by next; a slow flight uses one level, a fast one (zoom) two, refuelling adds one.
(define (domain zeno-travel)
  (:requirements :strips)
  (:predicates
    (at ?x ?c) (in ?p ?a) (fuel-level ?a ?l) (next ?l1 ?l2)
    (aircraft ?p) (person ?x) (city ?x) (flevel ?x))

  ; People get on and off an aircraft in the city where both are.
  (:action board
    :parameters (?p ?a ?c)
    :precondition (and (person ?p) (aircraft ?a) (city ?c) (at ?p ?c) (at ?a ?c))
    :effect (and (in ?p ?a) (not (at ?p ?c))))

  (:action debark
    :parameters (?p ?a ?c)
    :precondition (and (person ?p) (aircraft ?a) (city ?c) (in ?p ?a) (at ?a ?c))
    :effect (and (at ?p ?c) (not (in ?p ?a))))

  ; Flying slowly drops the fuel by one level (?l2 is the level below ?l1).
  (:action fly
    :parameters (?a ?c1 ?c2 ?l1 ?l2)
    :precondition (and (aircraft ?a) (city ?c1) (city ?c2) (flevel ?l1) (flevel ?l2)
                       (at ?a ?c1) (fuel-level ?a ?l1) (next ?l2 ?l1))
    :effect (and (at ?a ?c2) (fuel-level ?a ?l2) (not (at ?a ?c1)) (not (fuel-level ?a ?l1))))

  ; Zooming drops it by two levels (?l1 to ?l2 to ?l3).
  (:action zoom
    :parameters (?a ?c1 ?c2 ?l1 ?l2 ?l3)
    :precondition (and (aircraft ?a) (city ?c1) (city ?c2) (flevel ?l1) (flevel ?l2) (flevel ?l3)
                       (at ?a ?c1) (fuel-level ?a ?l1) (next ?l2 ?l1) (next ?l3 ?l2))
    :effect (and (at ?a ?c2) (fuel-level ?a ?l3) (not (at ?a ?c1)) (not (fuel-level ?a ?l1))))

  ; Refuelling raises the fuel by one level, in any city.
  (:action refuel
    :parameters (?a ?c ?l ?l1)
    :precondition (and (aircraft ?a) (city ?c) (flevel ?l) (flevel ?l1)
                       (fuel-level ?a ?l) (next ?l ?l1) (at ?a ?c))
    :effect (and (fuel-level ?a ?l1) (not (fuel-level ?a ?l)))))
