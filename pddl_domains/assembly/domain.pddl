; Assembly, written for pddlworlds after the model of the AIPS-98 assembly domain (assembly): build a
; whole out of parts, in the order the design asks, with the tools each assembly needs; some parts go in
; only for a while and must come out again before the whole is complete.
(define (domain assembly)
  (:requirements :adl)
  (:types assembly resource - object)  ; a single part is an assembly with no parts of its own
  (:predicates
    (available ?x - object)
    (complete ?a - assembly)
    (requires ?a - assembly ?r - resource)
    (committed ?r - resource ?a - assembly)
    (incorporated ?part ?whole - assembly)
    (part-of ?part ?whole - assembly)
    (to-be-removed ?part ?whole - assembly)
    (assemble-order ?part1 ?part2 ?whole - assembly)    ; ?part1 goes into ?whole before ?part2
    (transient-part ?part ?whole - assembly)            ; ?part goes into ?whole for a while only
    (remove-order ?part1 ?part2 ?whole - assembly))     ; ?part2 comes out of ?whole once ?part1 is in

  ; set a tool aside for work on one assembly
  (:action commit
    :parameters (?res - resource ?as - assembly)
    :precondition (available ?res)
    :effect (and (not (available ?res)) (committed ?res ?as)))

  (:action release
    :parameters (?res - resource ?as - assembly)
    :precondition (committed ?res ?as)
    :effect (and (not (committed ?res ?as)) (available ?res)))

  ; put ?part into ?whole; the whole is complete when this was its last missing part and nothing
  ; temporary is left in it
  (:action assemble
    :parameters (?part ?whole - assembly)
    :precondition (and (forall (?res - resource)
                         (imply (requires ?whole ?res) (committed ?res ?whole)))
                       (or (part-of ?part ?whole) (transient-part ?part ?whole))
                       (available ?part)
                       (forall (?prev - assembly)
                         (imply (assemble-order ?prev ?part ?whole) (incorporated ?prev ?whole))))
    :effect (and (incorporated ?part ?whole)
                 (not (available ?part))
                 (when (and (not (exists (?p - assembly)
                                   (and (part-of ?p ?whole)
                                        (not (= ?p ?part))
                                        (not (incorporated ?p ?whole)))))
                            (not (exists (?tp - assembly)
                                   (and (transient-part ?tp ?whole) (incorporated ?tp ?whole)))))
                       (and (complete ?whole) (available ?whole)))))

  ; take ?part out of ?whole: a temporary part once the parts it waits for are in, or a real part
  ; while nothing that must follow it is in yet
  (:action remove
    :parameters (?part ?whole - assembly)
    :precondition (and (forall (?res - resource)
                         (imply (requires ?whole ?res) (committed ?res ?whole)))
                       (incorporated ?part ?whole)
                       (or (and (transient-part ?part ?whole)
                                (forall (?prev - assembly)
                                  (imply (remove-order ?prev ?part ?whole) (incorporated ?prev ?whole))))
                           (and (part-of ?part ?whole)
                                (not (exists (?prev - assembly)
                                       (and (assemble-order ?prev ?part ?whole)
                                            (incorporated ?prev ?whole)))))))
    :effect (and (not (incorporated ?part ?whole))
                 (available ?part)
                 (when (and (not (exists (?p - assembly)
                                   (and (part-of ?p ?whole) (not (incorporated ?p ?whole)))))
                            (not (exists (?tp - assembly)
                                   (and (transient-part ?tp ?whole)
                                        (not (= ?tp ?part))
                                        (incorporated ?tp ?whole)))))
                       (and (complete ?whole) (available ?whole))))))
