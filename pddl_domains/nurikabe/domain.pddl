; Nurikabe, written for pddlworlds after the model of the IPC 2018 optimal-track nurikabe domain
; (nurikabe-opt18): a robot paints islands on a grid. Standing on an island's numbered cell it starts
; painting, and it paints as many cells as the number says, moving as it paints; it never steps on paint,
; and a cell touching two islands stays unpainted.
(define (domain nurikabe)
  (:requirements :typing :conditional-effects :negative-preconditions)
  (:types cell num group - object)
  (:constants n0 - num)
  (:predicates
    (NEXT ?n1 - num ?n2 - num)           ; ?n2 is one more than ?n1
    (CONNECTED ?c - cell ?c2 - cell)     ; neighbouring cells
    (SOURCE ?x - cell ?g - group)        ; the island's numbered cell
    (painted ?r - cell)
    (available ?x - cell)                ; a cell touching no island yet
    (part-of ?x - cell ?y - group)       ; a cell touching that island
    (blocked ?x - cell)                  ; a cell touching two islands: never painted
    (remaining-cells ?x - group ?y - num); cells the island still needs
    (robot-pos ?x - cell)
    (moving)                             ; the robot is not painting
    (painting ?g - group)
    (group-painted ?g - group))

  (:action move
    :parameters (?from - cell ?to - cell)
    :precondition (and (CONNECTED ?from ?to) (moving) (not (painted ?to)) (robot-pos ?from))
    :effect (and (robot-pos ?to) (not (robot-pos ?from))))

  ; on the island's numbered cell: paint it and go on painting that island
  (:action start-painting
    :parameters (?c - cell ?g - group ?n1 - num ?n2 - num)
    :precondition (and (NEXT ?n2 ?n1) (SOURCE ?c ?g) (moving) (robot-pos ?c) (remaining-cells ?g ?n1))
    :effect (and (not (moving))
                 (painting ?g)
                 (painted ?c)
                 (remaining-cells ?g ?n2)
                 (not (remaining-cells ?g ?n1))))

  ; step onto a neighbouring cell and paint it; the cells around it now touch the island, and those
  ; already touching another island become blocked
  (:action move-painting
    :parameters (?from - cell ?to - cell ?g - group ?n1 - num ?n2 - num)
    :precondition (and (NEXT ?n2 ?n1)
                       (CONNECTED ?from ?to)
                       (not (painted ?to))
                       (not (blocked ?to))
                       (painting ?g)
                       (remaining-cells ?g ?n1)
                       (robot-pos ?from))
    :effect (and (robot-pos ?to)
                 (not (robot-pos ?from))
                 (painted ?to)
                 (remaining-cells ?g ?n2)
                 (not (remaining-cells ?g ?n1))
                 (forall (?cadj - cell)
                   (when (and (CONNECTED ?to ?cadj) (available ?cadj))
                         (and (not (available ?cadj)) (part-of ?cadj ?g))))
                 (forall (?cadj - cell)
                   (when (and (CONNECTED ?to ?cadj) (not (available ?cadj)) (not (part-of ?cadj ?g)))
                         (blocked ?cadj)))))

  ; the island has all its cells: stop painting
  (:action end-painting
    :parameters (?g - group)
    :precondition (and (painting ?g) (remaining-cells ?g n0))
    :effect (and (not (painting ?g)) (moving) (group-painted ?g))))
