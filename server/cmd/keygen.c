/* capledger keygen FILE — a new Ed25519 key for signing decisions outside the browser, or for
 * the server's checkpoints (CAPLEDGER_KEY_FILE). */
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/ledger/codec.h"
#include "core/ledger/decision.h"

int cmd_keygen(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: capledger keygen FILE   (writes FILE, mode 0600, and FILE.pub)\n");
        return 2;
    }
    if (sodium_init() < 0) {
        fprintf(stderr, "capledger: libsodium failed to initialise\n");
        return 1;
    }
    uint8_t pk[crypto_sign_PUBLICKEYBYTES];
    if (files_key_create(argv[1], pk) != 0)
        return 1;
    char pk_b64[CODEC_B64_LEN(crypto_sign_PUBLICKEYBYTES) + 1], key_id[DECISION_KEY_ID_HEX_LEN + 1];
    codec_b64_encode(pk, sizeof pk, pk_b64, sizeof pk_b64);
    decision_key_id(pk, key_id);
    printf("secret key:  %s (mode 0600; keep it private)\n", argv[1]);
    printf("public key:  %s.pub\n", argv[1]);
    printf("public_key:  %s   (register with PUT /api/v1/me/signing-key)\n", pk_b64);
    printf("key id:      %s   (signer_key_id)\n", key_id);
    return 0;
}
