; Unsolvable variant made by pddlworlds.unsolvable (scripts/generate_unsolvable.py, seed 0).
; Parent: barman generated/easy-03, pddlworlds' seeded generated split (scripts/generate_problems.py).
; Change: no dispenser provides ingredient3. Proof: planners/unsolvable.csv.
(define (problem easy-03-no-ingredient3)
  (:domain barman)
  (:objects
    shaker1 - shaker
    left right - hand
    shot1 shot2 - shot
    ingredient1 ingredient2 ingredient3 - ingredient
    cocktail1 cocktail2 - cocktail
    dispenser1 dispenser2 dispenser3 - dispenser
    l0 l1 l2 - level
  )
  (:init
    (clean shaker1)
    (clean shot1)
    (clean shot2)
    (cocktail-part1 cocktail1 ingredient1)
    (cocktail-part1 cocktail2 ingredient3)
    (cocktail-part2 cocktail1 ingredient3)
    (cocktail-part2 cocktail2 ingredient2)
    (dispenses dispenser1 ingredient1)
    (dispenses dispenser2 ingredient2)
    (empty shaker1)
    (empty shot1)
    (empty shot2)
    (handempty left)
    (handempty right)
    (next l0 l1)
    (next l1 l2)
    (ontable shaker1)
    (ontable shot1)
    (ontable shot2)
    (shaker-empty-level shaker1 l0)
    (shaker-level shaker1 l0)
  )
  (:goal
    (and
      (contains shot2 cocktail1)
    )
  )
)
