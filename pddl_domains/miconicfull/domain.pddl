; Elevator control with house rules, written for pddlworlds after the model of the AIPS-2000 Miconic
; domain in its full-ADL form (miconic-fulladl, after Jana Koehler and Kilian Schuster of Schindler
; Lifts): passengers may go up or down only, ride nonstop, be VIPs served first, need an attendant, be
; kept apart from another group, or be barred from floors.
(define (domain miconic)
  (:requirements :typing :conditional-effects :disjunctive-preconditions :negative-preconditions)
  (:types passenger - object
          floor - object)
  (:predicates
    (origin ?person - passenger ?floor - floor)
    (destin ?person - passenger ?floor - floor)
    (going_up ?person - passenger)        ; rides only while the lift goes up
    (going_down ?person - passenger)      ; rides only while the lift goes down
    (vip ?person - passenger)             ; served before anyone else
    (going_nonstop ?person - passenger)   ; the lift stops nowhere but at this rider's destination
    (attendant ?person - passenger)
    (never_alone ?person - passenger)     ; must have an attendant aboard or boarding with them
    (conflict_A ?person - passenger)      ; group A and group B never share the lift
    (conflict_B ?person - passenger)
    (no-access ?person - passenger ?floor - floor) ; the lift may not stop there with this rider
    (above ?floor1 - floor ?floor2 - floor)        ; ?floor2 is higher than ?floor1
    (boarded ?person - passenger)
    (served ?person - passenger)
    (lift-at ?floor - floor))

  ; a stop at ?f: riders bound for ?f get out, those waiting there get in, provided the house rules hold
  ; for who is in the lift and who boards
  (:action stop
    :parameters (?f - floor)
    :precondition
      (and (lift-at ?f)
           ; someone of group A aboard or boarding: nobody of group B is aboard or boarding
           (imply (exists (?p - passenger)
                    (and (conflict_A ?p)
                         (or (and (not (served ?p)) (origin ?p ?f))
                             (and (boarded ?p) (not (destin ?p ?f))))))
                  (forall (?q - passenger)
                    (imply (conflict_B ?q)
                           (and (or (destin ?q ?f) (not (boarded ?q)))
                                (or (served ?q) (not (origin ?q ?f)))))))
           ; and the same the other way round
           (imply (exists (?p - passenger)
                    (and (conflict_B ?p)
                         (or (and (not (served ?p)) (origin ?p ?f))
                             (and (boarded ?p) (not (destin ?p ?f))))))
                  (forall (?q - passenger)
                    (imply (conflict_A ?q)
                           (and (or (destin ?q ?f) (not (boarded ?q)))
                                (or (served ?q) (not (origin ?q ?f)))))))
           ; a rider who is never to be alone rides with an attendant
           (imply (exists (?p - passenger)
                    (and (never_alone ?p)
                         (or (and (origin ?p ?f) (not (served ?p)))
                             (and (boarded ?p) (not (destin ?p ?f))))))
                  (exists (?q - passenger)
                    (and (attendant ?q)
                         (or (and (boarded ?q) (not (destin ?q ?f)))
                             (and (not (served ?q)) (origin ?q ?f))))))
           ; nonstop riders aboard: only their destination
           (forall (?p - passenger)
             (imply (going_nonstop ?p) (imply (boarded ?p) (destin ?p ?f))))
           ; VIPs first: every VIP served, or the stop is a VIP's origin or destination
           (or (forall (?p - passenger) (imply (vip ?p) (served ?p)))
               (exists (?p - passenger)
                 (and (vip ?p) (or (origin ?p ?f) (destin ?p ?f)))))
           ; nobody aboard is barred from ?f
           (forall (?p - passenger) (imply (no-access ?p ?f) (not (boarded ?p)))))
    :effect (and (forall (?p - passenger)
                   (when (and (boarded ?p) (destin ?p ?f))
                         (and (not (boarded ?p)) (served ?p))))
                 (forall (?p - passenger)
                   (when (and (origin ?p ?f) (not (served ?p)))
                         (boarded ?p)))))

  ; up, unless a rider going down only is aboard
  (:action up
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f1 ?f2)
                       (forall (?p - passenger) (imply (going_down ?p) (not (boarded ?p)))))
    :effect (and (lift-at ?f2) (not (lift-at ?f1))))

  ; down, unless a rider going up only is aboard
  (:action down
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f2 ?f1)
                       (forall (?p - passenger) (imply (going_up ?p) (not (boarded ?p)))))
    :effect (and (lift-at ?f2) (not (lift-at ?f1)))))
