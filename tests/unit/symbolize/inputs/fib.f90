! Symbolizer test input: a recursive module function, so it stays out of line.
module fibmod
contains
  recursive integer function fib(n) result(r)  ! LINE: fib_begin
    integer, intent(in) :: n
    if (n < 2) then
      r = n
    else
      r = fib(n - 1) + fib(n - 2)
    end if
  end function fib  ! LINE: fib_end
end module fibmod

program main
  use fibmod
  print *, fib(20)
end program main
