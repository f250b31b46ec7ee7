; Scanalyzer, written for pddlworlds after the model of the IPC 2008 domain (scanalyzer-08-strips):
; the same types, predicates, actions, parameters and costs, so the competition's problem files load unchanged
; (the competition ships one domain file per problem; all thirty are this one model).
; Plants on conveyor belt segments are moved around in cycles of two or four segments; a cycle that passes the
; imaging chamber also analyses the plant on its first segment. Analysing costs 3, a plain rotation 1.
(define (domain scanalyzer3d)
  (:requirements :typing :action-costs)
  (:types segment car - object)
  (:predicates
    (on ?c - car ?s - segment)
    (analyzed ?c - car)
    (CYCLE-2 ?s1 ?s2 - segment)
    (CYCLE-4 ?s1 ?s2 ?s3 ?s4 - segment)
    (CYCLE-2-WITH-ANALYSIS ?s1 ?s2 - segment)
    (CYCLE-4-WITH-ANALYSIS ?s1 ?s2 ?s3 ?s4 - segment))
  (:functions (total-cost) - number)

  ; Two segments swap their cars through the imaging chamber; the car that was on ?s1 is analysed.
  (:action analyze-2
    :parameters (?s1 ?s2 - segment ?c1 ?c2 - car)
    :precondition (and (CYCLE-2-WITH-ANALYSIS ?s1 ?s2) (on ?c1 ?s1) (on ?c2 ?s2))
    :effect (and (not (on ?c1 ?s1)) (not (on ?c2 ?s2)) (on ?c1 ?s2) (on ?c2 ?s1)
                 (analyzed ?c1) (increase (total-cost) 3)))

  ; Four segments pass their cars one place on (s1 to s4, s2 to s1, s3 to s2, s4 to s3); the car from ?s1 is analysed.
  (:action analyze-4
    :parameters (?s1 ?s2 ?s3 ?s4 - segment ?c1 ?c2 ?c3 ?c4 - car)
    :precondition (and (CYCLE-4-WITH-ANALYSIS ?s1 ?s2 ?s3 ?s4)
                       (on ?c1 ?s1) (on ?c2 ?s2) (on ?c3 ?s3) (on ?c4 ?s4))
    :effect (and (not (on ?c1 ?s1)) (not (on ?c2 ?s2)) (not (on ?c3 ?s3)) (not (on ?c4 ?s4))
                 (on ?c1 ?s4) (on ?c2 ?s1) (on ?c3 ?s2) (on ?c4 ?s3)
                 (analyzed ?c1) (increase (total-cost) 3)))

  ; The same two moves without the chamber.
  (:action rotate-2
    :parameters (?s1 ?s2 - segment ?c1 ?c2 - car)
    :precondition (and (CYCLE-2 ?s1 ?s2) (on ?c1 ?s1) (on ?c2 ?s2))
    :effect (and (not (on ?c1 ?s1)) (not (on ?c2 ?s2)) (on ?c1 ?s2) (on ?c2 ?s1)
                 (increase (total-cost) 1)))

  (:action rotate-4
    :parameters (?s1 ?s2 ?s3 ?s4 - segment ?c1 ?c2 ?c3 ?c4 - car)
    :precondition (and (CYCLE-4 ?s1 ?s2 ?s3 ?s4)
                       (on ?c1 ?s1) (on ?c2 ?s2) (on ?c3 ?s3) (on ?c4 ?s4))
    :effect (and (not (on ?c1 ?s1)) (not (on ?c2 ?s2)) (not (on ?c3 ?s3)) (not (on ?c4 ?s4))
                 (on ?c1 ?s4) (on ?c2 ?s1) (on ?c3 ?s2) (on ?c4 ?s3)
                 (increase (total-cost) 1))))
