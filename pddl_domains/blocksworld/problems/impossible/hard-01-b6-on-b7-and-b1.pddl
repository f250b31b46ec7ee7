; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: blocksworld generated/hard-01, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: the goal needs b6 on both b7 and b1. Proof: planners/unsolvable.csv.
(define (problem hard-01-b6-on-b7-and-b1)
  (:domain blocksworld-4ops)
  (:objects
    b1 b2 b3 b4 b5 b6 b7
  )
  (:init
    (arm-empty)
    (clear b2)
    (clear b3)
    (clear b7)
    (on b1 b4)
    (on b2 b1)
    (on b3 b5)
    (on b7 b6)
    (on-table b4)
    (on-table b5)
    (on-table b6)
  )
  (:goal
    (and
      (on b2 b1)
      (on b3 b4)
      (on b4 b5)
      (on b6 b7)
      (on b7 b2)
      (on b6 b1)
    )
  )
)
