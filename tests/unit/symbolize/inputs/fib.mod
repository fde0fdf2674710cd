(* Symbolizer test input: a recursive procedure, so it stays out of line. *)
MODULE fib;

FROM NumberIO IMPORT WriteCard;
FROM StrIO IMPORT WriteLn;

PROCEDURE Fib (n: CARDINAL) : CARDINAL;  (* LINE: fib_begin *)
BEGIN
  IF n < 2 THEN
    RETURN n
  ELSE
    RETURN Fib (n - 1) + Fib (n - 2)
  END
END Fib;  (* LINE: fib_end *)

BEGIN
  WriteCard (Fib (20), 0);
  WriteLn
END fib.
