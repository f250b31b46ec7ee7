; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: tyreworld generated/medium-03, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: there is no pump in the boot. Proof: planners/unsolvable.csv.
(define (problem medium-03-no-pump)
  (:domain tyreworld)
  (:objects
    the-hub1 the-hub2 - hub
    nuts1 nuts2 - nut
    boot - container
    r1 w1 r2 w2 - wheel
  )
  (:init
    (closed boot)
    (fastened the-hub1)
    (fastened the-hub2)
    (in jack boot)
    (in r1 boot)
    (in r2 boot)
    (in wrench boot)
    (intact r1)
    (intact r2)
    (not-inflated r1)
    (not-inflated r2)
    (on w1 the-hub1)
    (on w2 the-hub2)
    (on-ground the-hub1)
    (on-ground the-hub2)
    (tight nuts1 the-hub1)
    (tight nuts2 the-hub2)
    (unlocked boot)
  )
  (:goal
    (and
      (on r1 the-hub1)
      (inflated r1)
      (in w1 boot)
      (on r2 the-hub2)
      (inflated r2)
      (in w2 boot)
    )
  )
)
