{ main -> outer -> inner, as fpc builds a program by default: statically linked without libc (so
  no runtime can be preloaded: only the kernel sampler reaches it), with its call-frame
  information in .debug_frame only. }
program static_chain;

var
  sink: QWord;

function inner(n: QWord): QWord;
var
  i, acc: QWord;
begin
  acc := n;
  for i := 1 to 400000000 do
    acc := acc * 6364136223846793005 + i;
  inner := acc;
end;

function outer(n: QWord): QWord;
begin
  outer := inner(n) + 1;
end;

begin
  sink := outer(ParamCount);
  if sink = 42 then
    writeln('unlikely');
end.
