; Blocksworld with four operators: a single arm moves blocks between the table and towers.
; Written for pddlworlds; names match the public AgentBoard/PDDLGym problems (domain blocksworld-4ops).
(define (domain blocksworld-4ops)
  (:requirements :strips)
  (:predicates
    (arm-empty)
    (on-table ?x)
    (on ?x ?y)
    (clear ?x)
    (holding ?x))

  (:action pickup
    :parameters (?ob)
    :precondition (and (clear ?ob) (on-table ?ob) (arm-empty))
    :effect (and (holding ?ob)
                 (not (clear ?ob)) (not (on-table ?ob)) (not (arm-empty))))

  (:action putdown
    :parameters (?ob)
    :precondition (holding ?ob)
    :effect (and (clear ?ob) (arm-empty) (on-table ?ob)
                 (not (holding ?ob))))

  (:action stack
    :parameters (?ob ?underob)
    :precondition (and (holding ?ob) (clear ?underob))
    :effect (and (arm-empty) (clear ?ob) (on ?ob ?underob)
                 (not (clear ?underob)) (not (holding ?ob))))

  (:action unstack
    :parameters (?ob ?underob)
    :precondition (and (on ?ob ?underob) (clear ?ob) (arm-empty))
    :effect (and (holding ?ob) (clear ?underob)
                 (not (on ?ob ?underob)) (not (clear ?ob)) (not (arm-empty)))))
