; Data network, written for pddlworlds after the model of the IPC 2018 optimal-track domain (data-network-opt18):
; the same types, predicates, functions, actions, parameters and costs, so the competition's problem files load
; unchanged.
; Servers hold data on disk and in memory; scripts turn two data items in a server's memory into a third.
; Memory is counted with number objects: SUM and LESS-EQUAL are the arithmetic tables a problem gives.
(define (domain data-network)
  (:requirements :typing :negative-preconditions :action-costs)
  (:types data script server numbers)
  (:predicates
    (SCRIPT-IO ?s - script ?in1 - data ?in2 - data ?out - data)
    (CONNECTED ?from - server ?to - server)
    (DATA-SIZE ?d - data ?n - numbers)
    (CAPACITY ?s - server ?n - numbers)
    (SUM ?n1 - numbers ?n2 - numbers ?sum - numbers)
    (LESS-EQUAL ?n1 - numbers ?n2 - numbers)
    (saved ?d - data ?s - server)
    (cached ?d - data ?s - server)
    (usage ?s - server ?n - numbers))
  (:functions
    (total-cost) - number
    (process-cost ?sc - script ?s - server) - number
    (send-cost ?from ?to - server ?size - numbers) - number
    (io-cost ?s - server ?size - numbers) - number)

  ; Freeing memory is free.
  (:action release
    :parameters (?d - data ?s - server ?size ?before ?subsequent - numbers)
    :precondition (and (DATA-SIZE ?d ?size) (SUM ?subsequent ?size ?before) (cached ?d ?s) (usage ?s ?before))
    :effect (and (not (cached ?d ?s)) (not (usage ?s ?before)) (usage ?s ?subsequent)
                 (increase (total-cost) 0)))

  ; Writing to disk keeps the copy in memory.
  (:action save
    :parameters (?d - data ?size - numbers ?s - server)
    :precondition (and (DATA-SIZE ?d ?size) (cached ?d ?s))
    :effect (and (saved ?d ?s) (increase (total-cost) (io-cost ?s ?size))))

  ; Reading from disk needs room in memory.
  (:action load
    :parameters (?d - data ?s - server ?size ?limit ?before ?subsequent - numbers)
    :precondition (and (DATA-SIZE ?d ?size) (CAPACITY ?s ?limit) (SUM ?before ?size ?subsequent)
                       (LESS-EQUAL ?subsequent ?limit) (saved ?d ?s) (not (cached ?d ?s)) (usage ?s ?before))
    :effect (and (cached ?d ?s) (not (usage ?s ?before)) (usage ?s ?subsequent)
                 (increase (total-cost) (io-cost ?s ?size))))

  ; Sending copies data from one server's memory into a connected server's memory.
  (:action send
    :parameters (?d - data ?from ?to - server ?size ?limit ?before ?subsequent - numbers)
    :precondition (and (CONNECTED ?from ?to) (DATA-SIZE ?d ?size) (CAPACITY ?to ?limit)
                       (SUM ?before ?size ?subsequent) (LESS-EQUAL ?subsequent ?limit)
                       (cached ?d ?from) (not (cached ?d ?to)) (usage ?to ?before))
    :effect (and (cached ?d ?to) (not (usage ?to ?before)) (usage ?to ?subsequent)
                 (increase (total-cost) (send-cost ?from ?to ?size))))

  ; A script reads two items in memory and writes its output there.
  (:action process
    :parameters (?in1 ?in2 ?out - data ?sc - script ?s - server ?size ?limit ?before ?subsequent - numbers)
    :precondition (and (SCRIPT-IO ?sc ?in1 ?in2 ?out) (DATA-SIZE ?out ?size) (CAPACITY ?s ?limit)
                       (SUM ?before ?size ?subsequent) (LESS-EQUAL ?subsequent ?limit)
                       (cached ?in1 ?s) (cached ?in2 ?s) (not (cached ?out ?s)) (usage ?s ?before))
    :effect (and (cached ?out ?s) (not (usage ?s ?before)) (usage ?s ?subsequent)
                 (increase (total-cost) (process-cost ?sc ?s)))))
