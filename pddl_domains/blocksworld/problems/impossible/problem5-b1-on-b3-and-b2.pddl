; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: blocksworld agentboard/problem5, a public AgentBoard problem; origin and licence in pddl_domains/README.md.
; Change: the goal needs b1 on both b3 and b2. Proof: planners/unsolvable.csv.
(define (problem problem5-b1-on-b3-and-b2)
  (:domain blocksworld-4ops)
  (:objects
    b1 b2 b3 b4 b5
  )
  (:init
    (arm-empty)
    (clear b4)
    (on b1 b2)
    (on b2 b3)
    (on b3 b5)
    (on b4 b1)
    (on-table b5)
  )
  (:goal
    (and
      (on b1 b3)
      (on b3 b5)
      (on b1 b2)
    )
  )
)
