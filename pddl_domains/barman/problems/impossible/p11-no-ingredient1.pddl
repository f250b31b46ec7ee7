; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: barman agentboard/p11, a public AgentBoard problem; origin and licence in pddl_domains/README.md.
; Change: no dispenser provides ingredient1. Proof: planners/unsolvable.csv.
(define (problem p11-no-ingredient1)
  (:domain barman)
  (:objects
    shaker1 - shaker
    left right - hand
    shot1 shot2 shot3 shot4 shot5 shot6 - shot
    ingredient1 ingredient2 ingredient3 - ingredient
    cocktail1 cocktail2 cocktail3 cocktail4 cocktail5 - cocktail
    dispenser1 dispenser2 dispenser3 - dispenser
    l0 l1 l2 - level
  )
  (:init
    (clean shaker1)
    (clean shot1)
    (clean shot2)
    (clean shot3)
    (clean shot4)
    (clean shot5)
    (clean shot6)
    (cocktail-part1 cocktail1 ingredient1)
    (cocktail-part1 cocktail2 ingredient3)
    (cocktail-part1 cocktail3 ingredient3)
    (cocktail-part1 cocktail4 ingredient1)
    (cocktail-part1 cocktail5 ingredient1)
    (cocktail-part2 cocktail1 ingredient3)
    (cocktail-part2 cocktail2 ingredient1)
    (cocktail-part2 cocktail3 ingredient1)
    (cocktail-part2 cocktail4 ingredient3)
    (cocktail-part2 cocktail5 ingredient2)
    (dispenses dispenser2 ingredient2)
    (dispenses dispenser3 ingredient3)
    (empty shaker1)
    (empty shot1)
    (empty shot2)
    (empty shot3)
    (empty shot4)
    (empty shot5)
    (empty shot6)
    (handempty left)
    (handempty right)
    (next l0 l1)
    (next l1 l2)
    (ontable shaker1)
    (ontable shot1)
    (ontable shot2)
    (ontable shot3)
    (ontable shot4)
    (ontable shot5)
    (ontable shot6)
    (shaker-empty-level shaker1 l0)
    (shaker-level shaker1 l0)
  )
  (:goal
    (and
      (contains shot1 cocktail4)
    )
  )
)
