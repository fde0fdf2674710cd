{ Symbolizer test input: a recursive function, so it stays out of line. }
program fibdemo;

function Fib(n: longint): longint;  { LINE: fib_begin }
begin
  if n < 2 then
    Fib := n
  else
    Fib := Fib(n - 1) + Fib(n - 2);
end;  { LINE: fib_end }

begin
  writeln(Fib(20));
end.
