; Transport, written for pddlworlds after the model of the IPC 2008 sequential optimal track domain
; (transport-opt08-strips): same types, predicates, functions, actions and parameter order, so the
; competition's problem files load unchanged and their plans cost the same here.
; Vehicles drive along roads (a drive costs the road's length) and pick up or drop packages (1 each);
; a vehicle's capacity is the number of packages it still has room for.
(define (domain transport)
  (:requirements :typing :action-costs)
  (:types
    location target locatable - object
    vehicle package - locatable
    capacity-number - object)

  (:predicates
    (road ?l1 ?l2 - location)
    (at ?x - locatable ?v - location)
    (in ?x - package ?v - vehicle)
    (capacity ?v - vehicle ?s1 - capacity-number)              ; room left in ?v
    (capacity-predecessor ?s1 ?s2 - capacity-number))          ; ?s2 is one more than ?s1

  (:functions
    (road-length ?l1 ?l2 - location) - number
    (total-cost) - number)

  (:action drive
    :parameters (?v - vehicle ?l1 ?l2 - location)
    :precondition (and (at ?v ?l1) (road ?l1 ?l2))
    :effect (and (not (at ?v ?l1)) (at ?v ?l2)
                 (increase (total-cost) (road-length ?l1 ?l2))))

  ; Picking up takes one unit of room: it goes from ?s2 down to ?s1.
  (:action pick-up
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - capacity-number)
    :precondition (and (at ?v ?l) (at ?p ?l) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s2))
    :effect (and (not (at ?p ?l)) (in ?p ?v)
                 (capacity ?v ?s1) (not (capacity ?v ?s2))
                 (increase (total-cost) 1)))

  ; Dropping gives the unit back: room goes from ?s1 up to ?s2.
  (:action drop
    :parameters (?v - vehicle ?l - location ?p - package ?s1 ?s2 - capacity-number)
    :precondition (and (at ?v ?l) (in ?p ?v) (capacity-predecessor ?s1 ?s2) (capacity ?v ?s1))
    :effect (and (not (in ?p ?v)) (at ?p ?l)
                 (capacity ?v ?s2) (not (capacity ?v ?s1))
                 (increase (total-cost) 1))))
