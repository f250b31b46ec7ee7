; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: blocksworld generated/easy-03, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: the goal needs b3 on both b1 and b2. Proof: planners/unsolvable.csv.
(define (problem easy-03-b3-on-b1-and-b2)
  (:domain blocksworld-4ops)
  (:objects
    b1 b2 b3
  )
  (:init
    (arm-empty)
    (clear b3)
    (on b2 b1)
    (on b3 b2)
    (on-table b1)
  )
  (:goal
    (and
      (on b3 b1)
      (on b3 b2)
    )
  )
)
