# A folder of other files taken for an earlier pack (its PACKED file not asked for).
# file: tools/offline_pack.sh
# run: tests/test_offline.sh "$BUILD"
# says: want 2 and 'holds files that are not a pack'
s/\[ -d "\$PACK" \] \&\& \[ -n "\$(ls -A "\$PACK")" \] \&\& \[ ! -f "\$PACK\/PACKED" \] \&\&/[ -d "$PACK" ] \&\& [ -n "$(ls -A "$PACK")" ] \&\& [ -f "$PACK\/PACKED" ] \&\&/
