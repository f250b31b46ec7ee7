; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: tyreworld agentboard/p07, a public AgentBoard problem; origin and licence in pddl_domains/README.md.
; Change: there is no pump in the boot. Proof: planners/unsolvable.csv.
(define (problem p07-no-pump)
  (:domain tyreworld)
  (:objects
    the-hub1 the-hub2 the-hub3 - hub
    nuts1 nuts2 nuts3 - nut
    boot - container
    r1 w1 r2 w2 r3 w3 - wheel
  )
  (:init
    (closed boot)
    (fastened the-hub1)
    (fastened the-hub2)
    (fastened the-hub3)
    (in jack boot)
    (in r1 boot)
    (in r2 boot)
    (in r3 boot)
    (in wrench boot)
    (intact r1)
    (intact r2)
    (intact r3)
    (not-inflated r1)
    (not-inflated r2)
    (not-inflated r3)
    (on w1 the-hub1)
    (on w2 the-hub2)
    (on w3 the-hub3)
    (on-ground the-hub1)
    (on-ground the-hub2)
    (on-ground the-hub3)
    (tight nuts1 the-hub1)
    (tight nuts2 the-hub2)
    (tight nuts3 the-hub3)
    (unlocked boot)
  )
  (:goal
    (and
      (in w1 boot)
      (in w2 boot)
      (inflated r3)
    )
  )
)
