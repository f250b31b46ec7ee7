; Openstacks, written for pddlworlds after the model of the IPC 2006 propositional domain (openstacks):
; the same types, predicates, actions and parameters, so the competition's problem files load unchanged.
; One machine makes one product at a time; an order is started (it takes a free stack) before any of its
; products is made, and shipped (freeing its stack) once all of them are made. The counts n0, n1, ... say how
; many stacks are open and not in use; opening a new stack adds one.
(define (domain openstacks-sequencedstrips)
  (:requirements :typing :negative-preconditions :disjunctive-preconditions :quantified-preconditions)
  (:types order product count)
  (:predicates
    (includes ?o - order ?p - product)
    (waiting ?o - order)
    (started ?o - order)
    (shipped ?o - order)
    (made ?p - product)
    (machine-available)
    (machine-configured ?p - product)
    (stacks-avail ?s - count)
    (next-count ?s ?ns - count))

  ; Setting the machine up for a product that is not made yet.
  (:action setup-machine
    :parameters (?p - product ?avail - count)
    :precondition (and (machine-available) (not (made ?p)) (stacks-avail ?avail))
    :effect (and (not (machine-available)) (machine-configured ?p)))

  ; A product is made once every order that includes it has been started.
  (:action make-product
    :parameters (?p - product ?avail - count)
    :precondition (and (machine-configured ?p)
                       (forall (?o - order) (imply (includes ?o ?p) (started ?o)))
                       (stacks-avail ?avail))
    :effect (and (not (machine-configured ?p)) (machine-available) (made ?p)))

  ; Starting an order takes one free stack.
  (:action start-order
    :parameters (?o - order ?avail ?new-avail - count)
    :precondition (and (waiting ?o) (stacks-avail ?avail) (next-count ?new-avail ?avail))
    :effect (and (not (waiting ?o)) (started ?o) (not (stacks-avail ?avail)) (stacks-avail ?new-avail)))

  ; Shipping an order whose products are all made frees its stack.
  (:action ship-order
    :parameters (?o - order ?avail ?new-avail - count)
    :precondition (and (started ?o)
                       (forall (?p - product) (imply (includes ?o ?p) (made ?p)))
                       (stacks-avail ?avail) (next-count ?avail ?new-avail))
    :effect (and (not (started ?o)) (shipped ?o) (not (stacks-avail ?avail)) (stacks-avail ?new-avail)))

  (:action open-new-stack
    :parameters (?open ?new-open - count)
    :precondition (and (stacks-avail ?open) (next-count ?open ?new-open))
    :effect (and (not (stacks-avail ?open)) (stacks-avail ?new-open))))
