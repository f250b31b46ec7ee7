; Towers of Hanoi, written for pddlworlds after the model of the classic untyped STRIPS domain (hanoi).
; Pegs and discs are both plain objects: a disc rests on a peg or on a larger disc, and (smaller ?x ?y)
; says that ?y is small enough to be put on ?x (a peg takes any disc).
(define (domain hanoi)
  (:requirements :strips)
  (:predicates
    (clear ?x)
    (on ?x ?y)
    (smaller ?x ?y))

  ; The top disc of one stack goes onto a free peg or onto a larger top disc.
  (:action move
    :parameters (?disc ?from ?to)
    :precondition (and (smaller ?to ?disc) (on ?disc ?from) (clear ?disc) (clear ?to))
    :effect (and (clear ?from) (on ?disc ?to) (not (on ?disc ?from)) (not (clear ?to)))))
