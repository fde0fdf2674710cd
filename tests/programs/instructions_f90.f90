! Fortran for the instruction counts against callgrind (instructions_test): a sieve, a
! recursive function and array work.
program instructions
  implicit none
  integer, parameter :: n = 200000
  logical :: composite(n)
  integer :: i, j, primes
  real(8) :: v(5000), total
  composite = .false.
  do i = 2, int(sqrt(real(n)))
    if (.not. composite(i)) then
      do j = i * i, n, i
        composite(j) = .true.
      end do
    end if
  end do
  primes = count(.not. composite(2:n))
  do i = 1, 5000
    v(i) = mod(i * 37, 101) / 7.0d0
  end do
  total = 0
  do j = 1, 20
    do i = 1, 5000
      total = total + v(i) * j
    end do
  end do
  print *, primes, fib(22), total
contains
  recursive integer function fib(k) result(r)
    integer, intent(in) :: k
    if (k < 2) then
      r = k
    else
      r = fib(k - 1) + fib(k - 2)
    end if
  end function fib
end program instructions
