; Termes, written for pddlworlds after the model of the IPC 2018 domain (termes-opt18).
; One robot builds towers of blocks on a grid: it carries one block at a time, climbs at most one block up
; or down per step, and makes or scraps blocks only at the depot.

(define (domain termes)
  (:requirements :typing :negative-preconditions)
  (:types
    numb - object
    position - object)

  (:predicates
    (height ?p - position ?h - numb)
    (at ?p - position)
    (has-block)
    ; fixed by the problem
    (SUCC ?n1 - numb ?n2 - numb)               ; ?n1 is ?n2 plus one
    (NEIGHBOR ?p1 - position ?p2 - position)
    (IS-DEPOT ?p - position))

  ; walking between neighbours of equal height
  (:action move
    :parameters (?from - position ?to - position ?h - numb)
    :precondition (and (at ?from) (NEIGHBOR ?from ?to) (height ?from ?h) (height ?to ?h))
    :effect (and (not (at ?from)) (at ?to)))

  ; climbing onto a neighbour one block higher
  (:action move-up
    :parameters (?from - position ?hfrom - numb ?to - position ?hto - numb)
    :precondition (and (at ?from) (NEIGHBOR ?from ?to) (height ?from ?hfrom) (height ?to ?hto)
                       (SUCC ?hto ?hfrom))
    :effect (and (not (at ?from)) (at ?to)))

  ; stepping down onto a neighbour one block lower
  (:action move-down
    :parameters (?from - position ?hfrom - numb ?to - position ?hto - numb)
    :precondition (and (at ?from) (NEIGHBOR ?from ?to) (height ?from ?hfrom) (height ?to ?hto)
                       (SUCC ?hfrom ?hto))
    :effect (and (not (at ?from)) (at ?to)))

  ; the carried block goes onto a neighbour as high as the robot's own cell
  (:action place-block
    :parameters (?rpos - position ?bpos - position ?hbefore - numb ?hafter - numb)
    :precondition (and (at ?rpos) (NEIGHBOR ?rpos ?bpos) (height ?rpos ?hbefore) (height ?bpos ?hbefore)
                       (SUCC ?hafter ?hbefore) (has-block) (not (IS-DEPOT ?bpos)))
    :effect (and (not (height ?bpos ?hbefore)) (height ?bpos ?hafter) (not (has-block))))

  ; the top block of a neighbour one higher than the robot's cell is taken
  (:action remove-block
    :parameters (?rpos - position ?bpos - position ?hbefore - numb ?hafter - numb)
    :precondition (and (at ?rpos) (NEIGHBOR ?rpos ?bpos) (height ?rpos ?hafter) (height ?bpos ?hbefore)
                       (SUCC ?hbefore ?hafter) (not (has-block)))
    :effect (and (not (height ?bpos ?hbefore)) (height ?bpos ?hafter) (has-block)))

  (:action create-block
    :parameters (?p - position)
    :precondition (and (at ?p) (not (has-block)) (IS-DEPOT ?p))
    :effect (has-block))

  (:action destroy-block
    :parameters (?p - position)
    :precondition (and (at ?p) (has-block) (IS-DEPOT ?p))
    :effect (not (has-block))))
