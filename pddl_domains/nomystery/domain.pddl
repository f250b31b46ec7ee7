; No Mystery, written for pddlworlds after the model of the IPC 2011 sequential optimal track domain
; (nomystery-opt11-strips): same types, predicates, actions and parameter order, so the competition's
; problem files load unchanged and their plans cost the same here.
; One truck carries packages over a weighted map; every drive burns the road's fuel cost from a supply
; that is never refilled. Fuel amounts are objects (level0, level1, ...) related by a table of sums.
; Every action costs 1.
(define (domain transport-strips)
  (:requirements :typing :action-costs)
  (:types
    location fuellevel locatable - object
    package truck - locatable)

  (:predicates
    (connected ?l1 ?l2 - location)
    (at ?o - locatable ?l - location)
    (in ?p - package ?t - truck)
    (fuel ?t - truck ?level - fuellevel)
    (fuelcost ?level - fuellevel ?l1 ?l2 - location)   ; driving ?l1 to ?l2 burns ?level
    (sum ?a ?b ?c - fuellevel))                         ; ?a + ?b = ?c

  (:functions (total-cost) - number)

  (:action load
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (at ?p ?l))
    :effect (and (not (at ?p ?l)) (in ?p ?t) (increase (total-cost) 1)))

  (:action unload
    :parameters (?p - package ?t - truck ?l - location)
    :precondition (and (at ?t ?l) (in ?p ?t))
    :effect (and (at ?p ?l) (not (in ?p ?t)) (increase (total-cost) 1)))

  ; The fuel left after the drive, ?fuelpost, plus the road's cost, ?fueldelta, is the fuel before it.
  (:action drive
    :parameters (?t - truck ?l1 - location ?l2 - location
                 ?fuelpost - fuellevel ?fueldelta - fuellevel ?fuelpre - fuellevel)
    :precondition (and (connected ?l1 ?l2) (fuelcost ?fueldelta ?l1 ?l2) (fuel ?t ?fuelpre)
                       (sum ?fuelpost ?fueldelta ?fuelpre) (at ?t ?l1))
    :effect (and (not (at ?t ?l1)) (at ?t ?l2)
                 (not (fuel ?t ?fuelpre)) (fuel ?t ?fuelpost)
                 (increase (total-cost) 1))))
