; Sokoban, written for pddlworlds after the model of the IPC 2008 sequential-optimal domain
; (sokoban-opt08-strips): a player walks a maze of cells and pushes stones onto goal cells.
; Walking is free; every push costs 1, so the cheapest plan is the one with the fewest pushes.
(define (domain sokoban-sequential)
  (:requirements :typing :action-costs)
  (:types
    thing location direction - object
    player stone - thing)
  (:predicates
    (clear ?l - location)
    (at ?t - thing ?l - location)
    (at-goal ?s - stone)
    (is-goal ?l - location)
    (is-nongoal ?l - location)
    (move-dir ?from ?to - location ?dir - direction))
  (:functions (total-cost) - number)

  ; A step to a free neighbouring cell.
  (:action move
    :parameters (?p - player ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?from) (clear ?to) (move-dir ?from ?to ?dir))
    :effect (and (not (at ?p ?from)) (not (clear ?to)) (at ?p ?to) (clear ?from)))

  ; The player, standing next to a stone, pushes it one cell further the same way, onto a cell that is
  ; not a goal (the stone is then off the goals) ...
  (:action push-to-nongoal
    :parameters (?p - player ?s - stone ?ppos ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?ppos) (at ?s ?from) (clear ?to)
                       (move-dir ?ppos ?from ?dir) (move-dir ?from ?to ?dir) (is-nongoal ?to))
    :effect (and (not (at ?p ?ppos)) (not (at ?s ?from)) (not (clear ?to))
                 (at ?p ?from) (at ?s ?to) (clear ?ppos) (not (at-goal ?s))
                 (increase (total-cost) 1)))

  ; ... or onto a goal cell.
  (:action push-to-goal
    :parameters (?p - player ?s - stone ?ppos ?from ?to - location ?dir - direction)
    :precondition (and (at ?p ?ppos) (at ?s ?from) (clear ?to)
                       (move-dir ?ppos ?from ?dir) (move-dir ?from ?to ?dir) (is-goal ?to))
    :effect (and (not (at ?p ?ppos)) (not (at ?s ?from)) (not (clear ?to))
                 (at ?p ?from) (at ?s ?to) (clear ?ppos) (at-goal ?s)
                 (increase (total-cost) 1))))
