; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: blocksworld generated/easy-02, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: block b1, named by the goal, is not in the world. Proof: planners/unsolvable.csv.
(define (problem easy-02-missing-b1)
  (:domain blocksworld-4ops)
  (:objects
    b1 b2 b3 b4
  )
  (:init
    (arm-empty)
    (clear b2)
    (clear b4)
    (on b4 b3)
    (on-table b2)
    (on-table b3)
  )
  (:goal
    (and
      (on b2 b3)
      (on b3 b4)
      (on b4 b1)
    )
  )
)
