/* See golden_target.c. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SITE_LEAF_A,
  SITE_LEAF_B,
  SITE_MIDDLE_CALL,
  SITE_MIDDLE_SELF,
  SITE_RECURSE_CALL,
  SITE_RECURSE_SELF,
  SITE_MAIN_CALL_MIDDLE,
  SITE_MAIN_CALL_RECURSE,
  SITE_MAIN_SELF,
  GOLDEN_SITES
};

extern void* golden_sites[GOLDEN_SITES];
void golden_main(void);

#ifdef __cplusplus
}
#endif
