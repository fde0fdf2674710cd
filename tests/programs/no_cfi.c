/* Calls an assembler function without any call-frame information that moves the stack pointer
 * and clears the frame pointer, then spins about 0.4 s: no unwinder can find its caller, so
 * samples in it must be flagged broken. */
#include <stdio.h>

void spin_without_cfi(unsigned long iterations);

__asm__(
    "        .text\n"
    "        .globl  spin_without_cfi\n"
    "        .type   spin_without_cfi, @function\n"
    "spin_without_cfi:\n"
    "        pushq   %rbp\n"
    "        xorl    %ebp, %ebp\n"
    "        subq    $64, %rsp\n"
    "1:      decq    %rdi\n"
    "        jnz     1b\n"
    "        addq    $64, %rsp\n"
    "        popq    %rbp\n"
    "        ret\n"
    "        .size   spin_without_cfi, .-spin_without_cfi\n");

int main(void) {
  spin_without_cfi(1000000000ul);
  printf("no_cfi done\n");
  return 0;
}
