; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: barman generated/medium-02, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: no dispenser provides ingredient3. Proof: planners/unsolvable.csv.
(define (problem medium-02-no-ingredient3)
  (:domain barman)
  (:objects
    shaker1 - shaker
    left right - hand
    shot1 shot2 shot3 shot4 - shot
    ingredient1 ingredient2 ingredient3 - ingredient
    cocktail1 cocktail2 cocktail3 - cocktail
    dispenser1 dispenser2 dispenser3 - dispenser
    l0 l1 l2 - level
  )
  (:init
    (clean shaker1)
    (clean shot1)
    (clean shot2)
    (clean shot3)
    (clean shot4)
    (cocktail-part1 cocktail1 ingredient3)
    (cocktail-part1 cocktail2 ingredient1)
    (cocktail-part1 cocktail3 ingredient3)
    (cocktail-part2 cocktail1 ingredient1)
    (cocktail-part2 cocktail2 ingredient2)
    (cocktail-part2 cocktail3 ingredient2)
    (dispenses dispenser1 ingredient1)
    (dispenses dispenser2 ingredient2)
    (empty shaker1)
    (empty shot1)
    (empty shot2)
    (empty shot3)
    (empty shot4)
    (handempty left)
    (handempty right)
    (next l0 l1)
    (next l1 l2)
    (ontable shaker1)
    (ontable shot1)
    (ontable shot2)
    (ontable shot3)
    (ontable shot4)
    (shaker-empty-level shaker1 l0)
    (shaker-level shaker1 l0)
  )
  (:goal
    (and
      (contains shot1 ingredient3)
      (contains shot3 cocktail1)
      (contains shot4 cocktail1)
    )
  )
)
