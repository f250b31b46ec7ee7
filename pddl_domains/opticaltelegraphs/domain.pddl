; Optical telegraphs, written for pddlworlds after the model of the IPC 2004 domain (optical-telegraphs): the
; competition's "protocol" domain, Stefan Edelkamp's compilation of Promela models, with its predicates,
; actions, parameters and derived predicates, so the competition's problem files load unchanged.
; Processes run programs of local-state transitions; a transition reads a message from or writes one into
; a channel (a queue of cells). A step of the protocol takes several actions: a pending process chooses a
; transition (activate-trans), does its channel operation (queue-write, queue-read), the channel settles
; (advance-...), and the process moves on (perform-trans). The goal is a deadlock: every process blocked.
(define (domain protocol)
  (:requirements :typing :derived-predicates :equality :disjunctive-preconditions :negative-preconditions)
  (:types process proctype state queue transition number_ message queuetype queue-state - object)
  (:predicates
    (is-a-queue ?q - queue ?pt - queuetype)
    (is-a-process ?q - process ?pt - proctype)
    (at-process ?p - process ?s - state)                   ; the process's local state
    (trans ?pt - proctype ?t - transition ?s1 ?s2 - state)  ; program ?pt goes from ?s1 to ?s2 by ?t
    (writes ?p - process ?q - queue ?t - transition)
    (reads ?p - process ?q - queue ?t - transition)
    (enabled ?p - process ?t - transition)                  ; channel operation done, the move is due
    (pending ?p - process)                                  ; free to choose its next transition
    (activate ?p - process ?t - transition)                 ; has chosen ?t
    (queue-next ?qt - queuetype ?qs1 ?qs2 - queue-state)    ; cell order in channels of type ?qt
    (queue-head ?q - queue ?qs - queue-state)
    (queue-tail ?q - queue ?qs - queue-state)
    (advance-tail ?q - queue)                               ; a write is still to be stored
    (advance-head ?q - queue)                               ; a read is still to be taken out
    (settled ?q - queue)                                    ; no operation on the channel is under way
    (blocked ?p - process)                                  ; derived: no transition of the process can go on
    (blocked-trans ?p - process ?t - transition)            ; derived: the chosen ?t cannot go on
    (queue-msg ?q - queue ?p - queue-state ?m - message)
    (queue-head-msg ?q - queue ?m - message)
    (queue-tail-msg ?q - queue ?m - message)
    (trans-msg ?t - transition ?m - message)
    (inc ?n1 ?n2 - number_)
    (dec ?n1 ?n2 - number_)
    (queue-size ?q - queue ?n1 - number_)
    (queue-max ?qt - queuetype ?n1 - number_)
    (is-zero ?n1 - number_)
    (is-not-zero ?n1 - number_)
    (is-max ?qt - queuetype ?n1 - number_)
    (is-not-max ?qt - queuetype ?n1 - number_))

  ; A process is blocked when in its local state every transition out of it is blocked (with none out, it
  ; is blocked at once).
  (:derived (blocked ?p - process)
    (exists (?s - state)
      (exists (?pt - proctype)
        (and (at-process ?p ?s)
             (is-a-process ?p ?pt)
             (forall (?t - transition)
               (or (forall (?s2 - state) (not (trans ?pt ?t ?s ?s2)))
                   (blocked-trans ?p ?t)))))))

  ; A chosen transition is blocked when it would read from a settled empty channel ...
  (:derived (blocked-trans ?p - process ?t - transition)
    (exists (?q - queue)
      (exists (?m - message)
        (exists (?n - number_)
          (and (activate ?p ?t) (reads ?p ?q ?t) (settled ?q) (trans-msg ?t ?m)
               (queue-size ?q ?n) (is-zero ?n))))))

  ; ... write into a settled full one ...
  (:derived (blocked-trans ?p - process ?t - transition)
    (exists (?q - queue)
      (exists (?qt - queuetype)
        (exists (?m - message)
          (exists (?n - number_)
            (and (activate ?p ?t) (writes ?p ?q ?t) (settled ?q) (trans-msg ?t ?m)
                 (is-a-queue ?q ?qt) (queue-size ?q ?n) (is-max ?qt ?n)))))))

  ; ... or read a message other than the one at the head of a settled channel.
  (:derived (blocked-trans ?p - process ?t - transition)
    (exists (?q - queue)
      (exists (?m - message)
        (exists (?n - message)
          (and (activate ?p ?t) (reads ?p ?q ?t) (settled ?q) (trans-msg ?t ?m)
               (queue-head-msg ?q ?n) (not (= ?m ?n)))))))

  ; The chosen transition reads its message from the head of a settled channel; the head moves on next.
  (:action queue-read
    :parameters (?p - process ?t - transition ?q - queue ?m - message)
    :precondition (and (activate ?p ?t) (settled ?q) (reads ?p ?q ?t) (queue-head-msg ?q ?m) (trans-msg ?t ?m))
    :effect (and (not (activate ?p ?t)) (advance-head ?q) (not (settled ?q)) (enabled ?p ?t)))

  ; The chosen transition writes its message at the tail of a settled channel; the tail moves on next.
  (:action queue-write
    :parameters (?p - process ?t - transition ?q - queue ?m - message)
    :precondition (and (activate ?p ?t) (settled ?q) (writes ?p ?q ?t) (trans-msg ?t ?m))
    :effect (and (not (activate ?p ?t)) (enabled ?p ?t) (not (settled ?q)) (advance-tail ?q) (queue-tail-msg ?q ?m)))

  ; After a read: the head moves to the next cell, whose message it shows; one message fewer.
  (:action advance-queue-head
    :parameters (?q - queue ?qt - queuetype ?qs1 ?qs2 - queue-state ?m - message ?n1 ?n2 - number_)
    :precondition (and (queue-next ?qt ?qs1 ?qs2) (is-a-queue ?q ?qt) (queue-head ?q ?qs1) (advance-head ?q)
                       (queue-msg ?q ?qs2 ?m) (queue-size ?q ?n1) (dec ?n1 ?n2))
    :effect (and (settled ?q) (queue-head ?q ?qs2) (not (advance-head ?q)) (not (queue-head ?q ?qs1))
                 (queue-head-msg ?q ?m) (not (queue-size ?q ?n1)) (queue-size ?q ?n2)))

  ; After a write into an empty channel: the tail moves on, the new message is stored and shows at the head.
  (:action advance-empty-queue-tail
    :parameters (?q - queue ?qt - queuetype ?qs1 ?qs2 - queue-state ?m ?m1 - message ?n1 ?n2 - number_)
    :precondition (and (queue-next ?qt ?qs1 ?qs2) (is-a-queue ?q ?qt) (queue-tail ?q ?qs1) (advance-tail ?q)
                       (queue-tail-msg ?q ?m) (queue-head-msg ?q ?m1) (queue-size ?q ?n1) (inc ?n1 ?n2)
                       (is-zero ?n1))
    :effect (and (settled ?q) (not (advance-tail ?q)) (queue-tail ?q ?qs2) (not (queue-tail ?q ?qs1))
                 (queue-msg ?q ?qs2 ?m) (queue-head-msg ?q ?m) (not (queue-head-msg ?q ?m1))
                 (queue-size ?q ?n2) (not (queue-size ?q ?n1))))

  ; After a write into a channel holding messages: the tail moves on and the message is stored.
  (:action advance-non-empty-queue-tail
    :parameters (?q - queue ?qt - queuetype ?qs1 ?qs2 - queue-state ?m - message ?n1 ?n2 - number_)
    :precondition (and (queue-next ?qt ?qs1 ?qs2) (is-a-queue ?q ?qt) (queue-tail ?q ?qs1) (advance-tail ?q)
                       (queue-tail-msg ?q ?m) (queue-size ?q ?n1) (inc ?n1 ?n2) (is-not-zero ?n1))
    :effect (and (settled ?q) (not (advance-tail ?q)) (queue-tail ?q ?qs2) (not (queue-tail ?q ?qs1))
                 (queue-msg ?q ?qs2 ?m) (not (queue-size ?q ?n1)) (queue-size ?q ?n2)))

  ; With every channel settled, a process whose channel operation is done takes its transition (the program
  ; ?pt is any with that transition, as in the original) and is pending again.
  (:action perform-trans
    :parameters (?p - process ?pt - proctype ?t - transition ?s1 ?s2 - state)
    :precondition (and (forall (?q - queue) (settled ?q)) (trans ?pt ?t ?s1 ?s2) (enabled ?p ?t) (at-process ?p ?s1))
    :effect (and (at-process ?p ?s2) (not (at-process ?p ?s1)) (not (enabled ?p ?t)) (pending ?p)))

  ; With every channel settled, a pending process chooses a transition out of its local state.
  (:action activate-trans
    :parameters (?p - process ?pt - proctype ?t - transition ?s1 ?s2 - state)
    :precondition (and (forall (?q - queue) (settled ?q)) (trans ?pt ?t ?s1 ?s2) (is-a-process ?p ?pt)
                       (at-process ?p ?s1) (pending ?p))
    :effect (and (activate ?p ?t) (not (pending ?p)))))
