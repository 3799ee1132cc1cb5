#!/usr/bin/env python3
# Prints the Authorization headers that src/s3/sigv4.rs's botocore cases expect: botocore's
# own S3 signer at the fixed time 20130524T000000Z (pip install botocore; python3 this-file).
import datetime
from unittest import mock
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
t = datetime.datetime(2013, 5, 24, 0, 0, 0)
def sign(creds, region, method, url, headers, body=b"", unsigned=False):
    r = AWSRequest(method=method, url=url, headers=headers, data=body)
    if unsigned:
        r.headers['X-Amz-Content-SHA256'] = 'UNSIGNED-PAYLOAD'
    with mock.patch('botocore.auth.get_current_datetime', return_value=t), \
         mock.patch.object(S3SigV4Auth, '_should_sha256_sign_payload', return_value=not unsigned):
        S3SigV4Auth(creds, 's3', region).add_auth(r)
    return r.headers['X-Amz-Content-SHA256'] + ' ' + r.headers['Authorization']
key, secret = 'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
print('session HEAD', sign(Credentials(key, secret, 'SESSIONTOKEN/+='), 'eu-west-1', 'HEAD',
      'https://examplebucket.s3.eu-west-1.amazonaws.com/a%20b/c.txt', {}))
print('unsigned UploadPart', sign(Credentials(key, secret), 'us-east-1', 'PUT',
      'https://127.0.0.1:9000/bucket/dir/k%2Bey?partNumber=2&uploadId=a%2Fb%2Bc%3D%3D', {'Content-Length': '5'}, b'hello', unsigned=True))
