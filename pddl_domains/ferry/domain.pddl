; Ferry, written for pddlworlds after the model of the classic STRIPS ferry domain (ferry):
; the same predicates, actions, parameters and arities, so its problem files load unchanged.
; Untyped: the kinds are one-place predicates (car, location). One ferry, carrying one car at a time;
; not-eq holds of every two different locations.
(define (domain ferry)
  (:requirements :strips)
  (:predicates
    (not-eq ?x ?y)
    (car ?c) (location ?l)
    (at-ferry ?l) (at ?c ?l) (empty-ferry) (on ?c))

  ; The ferry sails from one location to any other.
  (:action sail
    :parameters (?from ?to)
    :precondition (and (not-eq ?from ?to) (location ?from) (location ?to) (at-ferry ?from))
    :effect (and (at-ferry ?to) (not (at-ferry ?from))))

  ; An empty ferry takes on a car waiting where it is.
  (:action board
    :parameters (?car ?loc)
    :precondition (and (car ?car) (location ?loc) (at ?car ?loc) (at-ferry ?loc) (empty-ferry))
    :effect (and (on ?car) (not (at ?car ?loc)) (not (empty-ferry))))

  ; The car on board drives off where the ferry is.
  (:action debark
    :parameters (?car ?loc)
    :precondition (and (car ?car) (location ?loc) (on ?car) (at-ferry ?loc))
    :effect (and (at ?car ?loc) (empty-ferry) (not (on ?car)))))
