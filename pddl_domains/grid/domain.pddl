; Grid, written for pddlworlds after the model of the AIPS-98 competition domain (grid): a robot walks a
; grid of places, some of them locked; a key opens a lock of its own shape from a neighbouring place, and
; the robot carries one key at a time. The original is untyped: place, key and shape are one-place predicates.
(define (domain grid)
  (:requirements :strips)
  (:predicates
    (conn ?x ?y)
    (key-shape ?k ?s)
    (lock-shape ?x ?s)
    (at ?r ?x)
    (at-robot ?x)
    (place ?p)
    (key ?k)
    (shape ?s)
    (locked ?x)
    (holding ?k)
    (open ?x)
    (arm-empty))

  ; Open a locked neighbouring place with a held key of the lock's shape.
  (:action unlock
    :parameters (?curpos ?lockpos ?key ?shape)
    :precondition (and (place ?curpos) (place ?lockpos) (key ?key) (shape ?shape)
                       (conn ?curpos ?lockpos) (key-shape ?key ?shape) (lock-shape ?lockpos ?shape)
                       (at-robot ?curpos) (locked ?lockpos) (holding ?key))
    :effect (and (open ?lockpos) (not (locked ?lockpos))))

  ; Step to a connected place that is open.
  (:action move
    :parameters (?curpos ?nextpos)
    :precondition (and (place ?curpos) (place ?nextpos) (at-robot ?curpos) (conn ?curpos ?nextpos) (open ?nextpos))
    :effect (and (at-robot ?nextpos) (not (at-robot ?curpos))))

  ; Take a key lying here with an empty hand.
  (:action pickup
    :parameters (?curpos ?key)
    :precondition (and (place ?curpos) (key ?key) (at-robot ?curpos) (at ?key ?curpos) (arm-empty))
    :effect (and (holding ?key) (not (at ?key ?curpos)) (not (arm-empty))))

  ; Take a key lying here, leaving the held one in its place.
  (:action pickup-and-loose
    :parameters (?curpos ?newkey ?oldkey)
    :precondition (and (place ?curpos) (key ?newkey) (key ?oldkey)
                       (at-robot ?curpos) (holding ?oldkey) (at ?newkey ?curpos))
    :effect (and (holding ?newkey) (at ?oldkey ?curpos) (not (holding ?oldkey)) (not (at ?newkey ?curpos))))

  (:action putdown
    :parameters (?curpos ?key)
    :precondition (and (place ?curpos) (key ?key) (at-robot ?curpos) (holding ?key))
    :effect (and (arm-empty) (at ?key ?curpos) (not (holding ?key)))))
