#ifndef ANONAUTH_CCRYPT_SHIM_H
#define ANONAUTH_CCRYPT_SHIM_H
#include <crypt.h>
#endif
