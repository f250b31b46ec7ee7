; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: tyreworld generated/easy-02, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: there is no pump in the boot. Proof: planners/unsolvable.csv.
(define (problem easy-02-no-pump)
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
    (in r1 boot)
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
    )
  )
)
