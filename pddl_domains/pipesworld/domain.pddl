; Pipesworld (no tankage), written for pddlworlds after the model of the IPC 2004 STRIPS domain
; (pipesworld-notankage): the same types, constants, predicates, actions, parameters and arities, so the
; competition's problem files load unchanged.
; Batches of oil products move through pipeline segments between areas. A segment is always full: pushing a
; batch in at its start (the "from" area) moves the contents one place towards its end and the last batch
; comes out into the "to" area; pulling a batch in at the end (pop) does the reverse. A segment holding
; several batches moves in two steps (start, then end), during which it is updating and nothing else may
; use it; a segment holding one batch moves in one step. Neighbouring batches must be of products that may
; touch each other.
(define (domain pipesworld_strips)
  (:requirements :strips :typing)
  (:types pipe area product batch-atom)
  (:constants lco gasoleo rat-a oca1 oc1b - product)
  (:predicates
    (connect ?from ?to - area ?pipe - pipe)
    (unitary ?pipe - pipe)
    (not-unitary ?pipe - pipe)
    (is-product ?batch-atom - batch-atom ?product - product)
    (may-interface ?product-a ?product-b - product)
    (on ?batch-atom - batch-atom ?area - area)
    (first ?batch-atom - batch-atom ?pipe - pipe)
    (follow ?next ?previous - batch-atom)
    (last ?batch-atom - batch-atom ?pipe - pipe)
    (normal ?pipe - pipe)
    (push-updating ?pipe - pipe)
    (pop-updating ?pipe - pipe))

  ; A batch from the start area enters a long segment, in front of its first batch.
  (:action PUSH-START
    :parameters (?pipe - pipe ?batch-atom-in - batch-atom ?from-area - area ?to-area - area
                 ?first-batch-atom - batch-atom ?product-batch-atom-in - product ?product-first-batch - product)
    :precondition (and (normal ?pipe) (first ?first-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (on ?batch-atom-in ?from-area) (not-unitary ?pipe)
                       (is-product ?batch-atom-in ?product-batch-atom-in)
                       (is-product ?first-batch-atom ?product-first-batch)
                       (may-interface ?product-batch-atom-in ?product-first-batch))
    :effect (and (push-updating ?pipe) (not (normal ?pipe))
                 (first ?batch-atom-in ?pipe) (not (first ?first-batch-atom ?pipe))
                 (follow ?first-batch-atom ?batch-atom-in)
                 (not (on ?batch-atom-in ?from-area))))

  ; The push completes: the last batch of the long segment comes out into the end area.
  (:action PUSH-END
    :parameters (?pipe - pipe ?from-area - area ?to-area - area
                 ?last-batch-atom - batch-atom ?next-last-batch-atom - batch-atom)
    :precondition (and (push-updating ?pipe) (last ?last-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (not-unitary ?pipe) (follow ?last-batch-atom ?next-last-batch-atom))
    :effect (and (not (push-updating ?pipe)) (normal ?pipe)
                 (not (follow ?last-batch-atom ?next-last-batch-atom))
                 (last ?next-last-batch-atom ?pipe) (not (last ?last-batch-atom ?pipe))
                 (on ?last-batch-atom ?to-area)))

  ; A batch from the end area enters a long segment backwards, behind its last batch.
  (:action POP-START
    :parameters (?pipe - pipe ?batch-atom-in - batch-atom ?from-area - area ?to-area - area
                 ?last-batch-atom - batch-atom ?product-batch-atom-in - product ?product-last-batch - product)
    :precondition (and (normal ?pipe) (last ?last-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (on ?batch-atom-in ?to-area) (not-unitary ?pipe)
                       (is-product ?batch-atom-in ?product-batch-atom-in)
                       (is-product ?last-batch-atom ?product-last-batch)
                       (may-interface ?product-batch-atom-in ?product-last-batch))
    :effect (and (pop-updating ?pipe) (not (normal ?pipe))
                 (last ?batch-atom-in ?pipe) (not (last ?last-batch-atom ?pipe))
                 (follow ?batch-atom-in ?last-batch-atom)
                 (not (on ?batch-atom-in ?to-area))))

  ; The pop completes: the first batch of the long segment comes out into the start area.
  (:action POP-END
    :parameters (?pipe - pipe ?from-area - area ?to-area - area
                 ?first-batch-atom - batch-atom ?next-first-batch-atom - batch-atom)
    :precondition (and (pop-updating ?pipe) (first ?first-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (not-unitary ?pipe) (follow ?next-first-batch-atom ?first-batch-atom))
    :effect (and (not (pop-updating ?pipe)) (normal ?pipe)
                 (not (follow ?next-first-batch-atom ?first-batch-atom))
                 (first ?next-first-batch-atom ?pipe) (not (first ?first-batch-atom ?pipe))
                 (on ?first-batch-atom ?from-area)))

  ; A one-batch segment: the batch from the start area goes in and the one inside comes out at the end.
  (:action PUSH-UNITARYPIPE
    :parameters (?pipe - pipe ?batch-atom-in - batch-atom ?from-area - area ?to-area - area
                 ?first-batch-atom - batch-atom ?product-batch-atom-in - product ?product-first-batch - product)
    :precondition (and (first ?first-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (on ?batch-atom-in ?from-area) (unitary ?pipe)
                       (is-product ?batch-atom-in ?product-batch-atom-in)
                       (is-product ?first-batch-atom ?product-first-batch)
                       (may-interface ?product-batch-atom-in ?product-first-batch))
    :effect (and (first ?batch-atom-in ?pipe) (not (first ?first-batch-atom ?pipe))
                 (last ?batch-atom-in ?pipe) (not (last ?first-batch-atom ?pipe))
                 (not (on ?batch-atom-in ?from-area))
                 (on ?first-batch-atom ?to-area)))

  ; A one-batch segment backwards: the batch from the end area goes in and the one inside comes out at the start.
  (:action POP-UNITARYPIPE
    :parameters (?pipe - pipe ?batch-atom-in - batch-atom ?from-area - area ?to-area - area
                 ?last-batch-atom - batch-atom ?product-batch-atom-in - product ?product-last-batch - product)
    :precondition (and (last ?last-batch-atom ?pipe) (connect ?from-area ?to-area ?pipe)
                       (on ?batch-atom-in ?to-area) (unitary ?pipe)
                       (is-product ?batch-atom-in ?product-batch-atom-in)
                       (is-product ?last-batch-atom ?product-last-batch)
                       (may-interface ?product-batch-atom-in ?product-last-batch))
    :effect (and (last ?batch-atom-in ?pipe) (not (last ?last-batch-atom ?pipe))
                 (first ?batch-atom-in ?pipe) (not (first ?last-batch-atom ?pipe))
                 (not (on ?batch-atom-in ?to-area))
                 (on ?last-batch-atom ?from-area))))
