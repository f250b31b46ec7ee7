; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: blocksworld agentboard/problem2, a public AgentBoard problem; origin and licence in pddl_domains/README.md.
; Change: block b1, named by the goal, is not in the world. Proof: planners/unsolvable.csv.
(define (problem problem2-missing-b1)
  (:domain blocksworld-4ops)
  (:objects
    b1 b2 b3
  )
  (:init
    (arm-empty)
    (clear b3)
    (on b3 b2)
    (on-table b2)
  )
  (:goal
    (and
      (on b2 b3)
      (on b3 b1)
    )
  )
)
