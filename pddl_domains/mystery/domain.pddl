; Mystery, written for pddlworlds after the model of the AIPS-98 competition domain (mystery):
; the same predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; The competition disguised a transport world behind unrelated words; behind them:
;   food = a location, pleasure = a vehicle, pain = a cargo, province = a fuel level, planet = a space level;
;   (eats n1 n2) a road from n1 to n2; (craves x n) x is at location n; (fears c v) cargo c is in vehicle v;
;   (locale n f) location n has fuel f; (attacks f1 f2) fuel f1 is one below f2;
;   (harmony v s) vehicle v has space s; (orbits s1 s2) space s1 is one below s2.
(define (domain mystery-strips)
  (:requirements :strips)
  (:predicates
    (province ?x) (planet ?x) (food ?x) (pleasure ?x) (pain ?x)
    (eats ?n1 ?n2) (craves ?v ?n) (fears ?c ?v) (locale ?n ?a)
    (harmony ?v ?s) (attacks ?i ?j) (orbits ?i ?j))

  ; Load cargo ?c into vehicle ?v at location ?n: the vehicle's space drops from ?s2 to ?s1.
  (:action overcome
    :parameters (?c ?v ?n ?s1 ?s2)
    :precondition (and (pain ?c) (pleasure ?v) (craves ?c ?n) (craves ?v ?n) (food ?n)
                       (harmony ?v ?s2) (planet ?s2) (orbits ?s1 ?s2) (planet ?s1))
    :effect (and (not (craves ?c ?n)) (fears ?c ?v) (not (harmony ?v ?s2)) (harmony ?v ?s1)))

  ; Drive vehicle ?v from ?n1 to ?n2 along a road: the fuel at ?n1 drops from ?l2 to ?l1.
  (:action feast
    :parameters (?v ?n1 ?n2 ?l1 ?l2)
    :precondition (and (craves ?v ?n1) (food ?n1) (pleasure ?v) (eats ?n1 ?n2) (food ?n2)
                       (locale ?n1 ?l2) (attacks ?l1 ?l2))
    :effect (and (not (craves ?v ?n1)) (craves ?v ?n2) (not (locale ?n1 ?l2)) (locale ?n1 ?l1)))

  ; Unload cargo ?c from vehicle ?v at location ?n: the vehicle's space rises from ?s1 to ?s2.
  (:action succumb
    :parameters (?c ?v ?n ?s1 ?s2)
    :precondition (and (fears ?c ?v) (pain ?c) (pleasure ?v) (craves ?v ?n) (food ?n)
                       (harmony ?v ?s1) (orbits ?s1 ?s2))
    :effect (and (not (fears ?c ?v)) (craves ?c ?n) (not (harmony ?v ?s1)) (harmony ?v ?s2))))
