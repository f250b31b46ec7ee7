; FreeCell, written for pddlworlds after the model of the STRIPS FreeCell domain of IPC 2000 and 2002 (freecell).
; Cards lie in columns; a top card may go onto a card one higher of the other colour, into a free cell, into an
; empty column, or home onto the card one lower of its suit. Numbers n0, n1, ... serve both as card values
; and as counts of free cells and empty columns.

(define (domain freecell)
  (:requirements :strips)
  (:predicates
    (on ?c1 ?c2)
    (incell ?c)
    (clear ?c)
    (cellspace ?n)           ; ?n free cells are empty
    (colspace ?n)            ; ?n columns are empty
    (home ?c)                ; ?c is the top card of its suit's home pile (the suit's 0 card when empty)
    (bottomcol ?c)
    (canstack ?c1 ?c2)       ; ?c1 is one lower than ?c2 and of the other colour
    (suit ?c ?s)
    (value ?c ?v)
    (successor ?n1 ?n0))     ; ?n1 is ?n0 plus one

  ; between columns: from on top of a card, or from the bottom of a column (which empties it)
  (:action move
    :parameters (?card ?oldcard ?newcard)
    :precondition (and (clear ?card) (clear ?newcard) (canstack ?card ?newcard) (on ?card ?oldcard))
    :effect (and (on ?card ?newcard) (clear ?oldcard) (not (on ?card ?oldcard)) (not (clear ?newcard))))

  (:action move-b
    :parameters (?card ?newcard ?cols ?ncols)
    :precondition (and (clear ?card) (bottomcol ?card) (clear ?newcard) (canstack ?card ?newcard)
                       (colspace ?cols) (successor ?ncols ?cols))
    :effect (and (on ?card ?newcard) (colspace ?ncols) (not (bottomcol ?card)) (not (clear ?newcard))
                 (not (colspace ?cols))))

  ; into a free cell
  (:action sendtofree
    :parameters (?card ?oldcard ?cells ?ncells)
    :precondition (and (clear ?card) (on ?card ?oldcard) (cellspace ?cells) (successor ?cells ?ncells))
    :effect (and (incell ?card) (clear ?oldcard) (cellspace ?ncells) (not (on ?card ?oldcard))
                 (not (clear ?card)) (not (cellspace ?cells))))

  (:action sendtofree-b
    :parameters (?card ?cells ?ncells ?cols ?ncols)
    :precondition (and (clear ?card) (bottomcol ?card) (cellspace ?cells) (successor ?cells ?ncells)
                       (colspace ?cols) (successor ?ncols ?cols))
    :effect (and (incell ?card) (colspace ?ncols) (cellspace ?ncells) (not (bottomcol ?card))
                 (not (clear ?card)) (not (colspace ?cols)) (not (cellspace ?cells))))

  ; into an empty column
  (:action sendtonewcol
    :parameters (?card ?oldcard ?cols ?ncols)
    :precondition (and (clear ?card) (colspace ?cols) (successor ?cols ?ncols) (on ?card ?oldcard))
    :effect (and (bottomcol ?card) (clear ?oldcard) (colspace ?ncols) (not (on ?card ?oldcard))
                 (not (colspace ?cols))))

  ; home, onto the card one lower of the same suit
  (:action sendtohome
    :parameters (?card ?oldcard ?suit ?vcard ?homecard ?vhomecard)
    :precondition (and (clear ?card) (on ?card ?oldcard) (home ?homecard) (suit ?card ?suit)
                       (suit ?homecard ?suit) (value ?card ?vcard) (value ?homecard ?vhomecard)
                       (successor ?vcard ?vhomecard))
    :effect (and (home ?card) (clear ?oldcard) (not (on ?card ?oldcard)) (not (home ?homecard))
                 (not (clear ?card))))

  (:action sendtohome-b
    :parameters (?card ?suit ?vcard ?homecard ?vhomecard ?cols ?ncols)
    :precondition (and (clear ?card) (bottomcol ?card) (home ?homecard) (suit ?card ?suit)
                       (suit ?homecard ?suit) (value ?card ?vcard) (value ?homecard ?vhomecard)
                       (successor ?vcard ?vhomecard) (colspace ?cols) (successor ?ncols ?cols))
    :effect (and (home ?card) (colspace ?ncols) (not (home ?homecard)) (not (clear ?card))
                 (not (bottomcol ?card)) (not (colspace ?cols))))

  ; out of a free cell: home, onto a column, or into an empty column
  (:action homefromfreecell
    :parameters (?card ?suit ?vcard ?homecard ?vhomecard ?cells ?ncells)
    :precondition (and (incell ?card) (home ?homecard) (suit ?card ?suit) (suit ?homecard ?suit)
                       (value ?card ?vcard) (value ?homecard ?vhomecard) (successor ?vcard ?vhomecard)
                       (cellspace ?cells) (successor ?ncells ?cells))
    :effect (and (home ?card) (cellspace ?ncells) (not (incell ?card)) (not (cellspace ?cells))
                 (not (home ?homecard))))

  (:action colfromfreecell
    :parameters (?card ?newcard ?cells ?ncells)
    :precondition (and (incell ?card) (clear ?newcard) (canstack ?card ?newcard) (cellspace ?cells)
                       (successor ?ncells ?cells))
    :effect (and (cellspace ?ncells) (clear ?card) (on ?card ?newcard) (not (incell ?card))
                 (not (cellspace ?cells)) (not (clear ?newcard))))

  (:action newcolfromfreecell
    :parameters (?card ?cols ?ncols ?cells ?ncells)
    :precondition (and (incell ?card) (colspace ?cols) (cellspace ?cells) (successor ?cols ?ncols)
                       (successor ?ncells ?cells))
    :effect (and (bottomcol ?card) (clear ?card) (colspace ?ncols) (cellspace ?ncells) (not (incell ?card))
                 (not (colspace ?cols)) (not (cellspace ?cells)))))
