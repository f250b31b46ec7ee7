; TPP (Traveling Purchaser), written for pddlworlds after the model of the IPC 2006 propositional domain
; (tpp): same types, predicates, actions and parameter order, so the competition's problem files load
; unchanged and their plans replay here.
; Trucks drive between markets and depots, buy goods one unit at a time at a market, load the bought units,
; and unload them at a depot, where they are stored. Quantities are level objects: (next ?a ?b) says ?a is
; one more than ?b.
(define (domain TPP-Propositional)
  (:requirements :strips :typing)
  (:types
    place locatable level - object
    depot market - place
    truck goods - locatable)

  (:predicates
    (loaded ?g - goods ?t - truck ?l - level)          ; ?t carries ?l units of ?g
    (ready-to-load ?g - goods ?m - market ?l - level)  ; ?l units of ?g bought and waiting at ?m
    (stored ?g - goods ?l - level)                     ; ?l units of ?g stored at the depots
    (on-sale ?g - goods ?m - market ?l - level)        ; ?m still sells ?l units of ?g
    (next ?l1 ?l2 - level)
    (at ?t - truck ?p - place)
    (connected ?p1 ?p2 - place))

  (:action drive
    :parameters (?t - truck ?from ?to - place)
    :precondition (and (at ?t ?from) (connected ?from ?to))
    :effect (and (not (at ?t ?from)) (at ?t ?to)))

  ; One unit: waiting at ?m goes down from ?l2 to ?l1, aboard ?t up from ?l3 to ?l4.
  (:action load
    :parameters (?g - goods ?t - truck ?m - market ?l1 ?l2 ?l3 ?l4 - level)
    :precondition (and (at ?t ?m) (loaded ?g ?t ?l3) (ready-to-load ?g ?m ?l2)
                       (next ?l2 ?l1) (next ?l4 ?l3))
    :effect (and (loaded ?g ?t ?l4) (not (loaded ?g ?t ?l3))
                 (ready-to-load ?g ?m ?l1) (not (ready-to-load ?g ?m ?l2))))

  ; One unit: aboard ?t goes down from ?l2 to ?l1, stored up from ?l3 to ?l4.
  (:action unload
    :parameters (?g - goods ?t - truck ?d - depot ?l1 ?l2 ?l3 ?l4 - level)
    :precondition (and (at ?t ?d) (loaded ?g ?t ?l2) (stored ?g ?l3)
                       (next ?l2 ?l1) (next ?l4 ?l3))
    :effect (and (loaded ?g ?t ?l1) (not (loaded ?g ?t ?l2))
                 (stored ?g ?l4) (not (stored ?g ?l3))))

  ; One unit: on sale at ?m goes down from ?l2 to ?l1, waiting there up from ?l3 to ?l4.
  (:action buy
    :parameters (?t - truck ?g - goods ?m - market ?l1 ?l2 ?l3 ?l4 - level)
    :precondition (and (at ?t ?m) (on-sale ?g ?m ?l2) (ready-to-load ?g ?m ?l3)
                       (next ?l2 ?l1) (next ?l4 ?l3))
    :effect (and (on-sale ?g ?m ?l1) (not (on-sale ?g ?m ?l2))
                 (ready-to-load ?g ?m ?l4) (not (ready-to-load ?g ?m ?l3)))))
