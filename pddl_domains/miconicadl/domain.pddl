; Elevator control, written for pddlworlds after the model of the AIPS-2000 Miconic domain in its
; simple-ADL form (miconic-simpleadl, after Jana Koehler and Kilian Schuster of Schindler Lifts): a stop
; lets out every boarded passenger bound for that floor and takes in everyone waiting there.
(define (domain miconic)
  (:requirements :typing :conditional-effects :negative-preconditions)
  (:types passenger - object
          floor - object)
  (:predicates
    (origin ?person - passenger ?floor - floor)   ; where the passenger waits (never changes)
    (destin ?person - passenger ?floor - floor)   ; where the passenger goes (never changes)
    (above ?floor1 - floor ?floor2 - floor)       ; ?floor2 is higher than ?floor1
    (boarded ?person - passenger)
    (served ?person - passenger)
    (lift-at ?floor - floor))

  (:action stop
    :parameters (?f - floor)
    :precondition (lift-at ?f)
    :effect (and (forall (?p - passenger)
                   (when (and (boarded ?p) (destin ?p ?f))
                         (and (not (boarded ?p)) (served ?p))))
                 (forall (?p - passenger)
                   (when (and (origin ?p ?f) (not (served ?p)))
                         (boarded ?p)))))

  (:action up
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f1 ?f2))
    :effect (and (lift-at ?f2) (not (lift-at ?f1))))

  (:action down
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f2 ?f1))
    :effect (and (lift-at ?f2) (not (lift-at ?f1)))))
