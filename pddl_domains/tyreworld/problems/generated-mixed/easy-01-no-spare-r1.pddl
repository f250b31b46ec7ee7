; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: tyreworld generated/easy-01, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: spare wheel r1 is not in the boot. Proof: planners/unsolvable.csv.
(define (problem easy-01-no-spare-r1)
  (:domain tyreworld)
  (:objects
    the-hub1 - hub
    nuts1 - nut
    boot - container
    r1 w1 - wheel
  )
  (:init
    (closed boot)
    (fastened the-hub1)
    (in jack boot)
    (in pump boot)
    (in wrench boot)
    (intact r1)
    (not-inflated r1)
    (on w1 the-hub1)
    (on-ground the-hub1)
    (tight nuts1 the-hub1)
    (unlocked boot)
  )
  (:goal
    (and
      (on r1 the-hub1)
      (inflated r1)
      (in w1 boot)
    )
  )
)
