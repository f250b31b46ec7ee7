; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: gripper agentboard/prob07, a public AgentBoard problem; origin and licence in pddl_domains/README.md.
; Change: ball6 starts in no room. Proof: planners/unsolvable.csv.
(define (problem prob07-nowhere-ball6)
  (:domain gripper-strips)
  (:objects
    rooma roomb ball6 ball5 ball4 ball3 ball2 ball1 left right
  )
  (:init
    (at ball1 rooma)
    (at ball2 roomb)
    (at ball3 rooma)
    (at ball4 rooma)
    (at ball5 roomb)
    (at-robby rooma)
    (ball ball1)
    (ball ball2)
    (ball ball3)
    (ball ball4)
    (ball ball5)
    (ball ball6)
    (free left)
    (free right)
    (gripper left)
    (gripper right)
    (room rooma)
    (room roomb)
  )
  (:goal
    (and
      (at ball6 rooma)
      (at ball5 rooma)
      (at ball4 roomb)
      (at ball3 roomb)
      (at ball2 rooma)
      (at ball1 roomb)
    )
  )
)
