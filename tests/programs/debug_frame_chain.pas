{ main -> outer -> inner. fpc writes its call-frame information into .debug_frame only. Built
  two ways: with -dCMEM, cmem makes the program link libc dynamically, so the runtime can be
  preloaded; without, it is what fpc builds by default, static without libc, which only the
  kernel sampler reaches. }
program debug_frame_chain;

{$ifdef CMEM}
uses cmem;
{$endif}

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
