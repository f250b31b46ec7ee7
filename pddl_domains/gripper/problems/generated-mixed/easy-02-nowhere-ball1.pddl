; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: gripper generated/easy-02, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: ball1 starts in no room. Proof: planners/unsolvable.csv.
(define (problem easy-02-nowhere-ball1)
  (:domain gripper-strips)
  (:objects
    rooma roomb ball3 ball2 ball1 left right
  )
  (:init
    (at ball2 rooma)
    (at ball3 rooma)
    (at-robby roomb)
    (ball ball1)
    (ball ball2)
    (ball ball3)
    (free left)
    (free right)
    (gripper left)
    (gripper right)
    (room rooma)
    (room roomb)
  )
  (:goal
    (and
      (at ball3 roomb)
      (at ball2 roomb)
      (at ball1 roomb)
    )
  )
)
