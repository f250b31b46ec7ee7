; Snake, written for pddlworlds after the model of the IPC 2018 domain (snake-opt18): the same constant,
; predicates, actions, parameters and arities, so the competition's problem files load unchanged.
; A snake moves over a grid of cells. Moving onto a free cell without an apple drags the tail along; moving
; onto an apple eats it and the snake grows by one, and the next apple of a fixed order appears (the order
; ends at dummypoint: no more apples). The snake's pieces are linked from the head back to the tail.
(define (domain snake)
  (:requirements :strips :equality :negative-preconditions)
  (:constants dummypoint)
  (:predicates
    (ISADJACENT ?x ?y)
    (tailsnake ?x)
    (headsnake ?x)
    (nextsnake ?x ?y)
    (blocked ?x)
    (spawn ?x)
    (NEXTSPAWN ?x ?y)
    (ispoint ?x))

  ; Move the head to a free neighbouring cell without an apple; the tail leaves ?tail for ?newtail.
  (:action move
    :parameters (?head ?newhead ?tail ?newtail)
    :precondition (and (headsnake ?head) (ISADJACENT ?head ?newhead) (tailsnake ?tail)
                       (nextsnake ?newtail ?tail) (not (blocked ?newhead)) (not (ispoint ?newhead)))
    :effect (and (blocked ?newhead) (headsnake ?newhead) (nextsnake ?newhead ?head)
                 (not (headsnake ?head)) (not (blocked ?tail)) (not (tailsnake ?tail))
                 (not (nextsnake ?newtail ?tail)) (tailsnake ?newtail)))

  ; Move the head onto an apple and eat it (the tail stays: the snake grows); the next apple appears.
  (:action move-and-eat-spawn
    :parameters (?head ?newhead ?spawnpoint ?nextspawnpoint)
    :precondition (and (headsnake ?head) (ISADJACENT ?head ?newhead) (not (blocked ?newhead))
                       (ispoint ?newhead) (spawn ?spawnpoint) (NEXTSPAWN ?spawnpoint ?nextspawnpoint)
                       (not (= ?spawnpoint dummypoint)))
    :effect (and (blocked ?newhead) (headsnake ?newhead) (nextsnake ?newhead ?head)
                 (not (headsnake ?head)) (not (ispoint ?newhead))
                 (ispoint ?spawnpoint) (not (spawn ?spawnpoint)) (spawn ?nextspawnpoint)))

  ; Move the head onto an apple and eat it when no more apples are to come.
  (:action move-and-eat-no-spawn
    :parameters (?head ?newhead)
    :precondition (and (headsnake ?head) (ISADJACENT ?head ?newhead) (not (blocked ?newhead))
                       (ispoint ?newhead) (spawn dummypoint))
    :effect (and (blocked ?newhead) (headsnake ?newhead) (nextsnake ?newhead ?head)
                 (not (headsnake ?head)) (not (ispoint ?newhead)))))
